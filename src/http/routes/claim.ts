import type { FastifyInstance } from 'fastify';
import { effectiveExpiry } from '../../domain/anonymous/service.ts';
import type { SpaceRow } from '../../domain/spaces/service.ts';
import {
  ClaimBody,
  ClaimResponse,
  ClaimStatusResponse,
  ContinuationResponse,
  RotateResponse,
} from '../../schemas/anonymous.ts';
import { principalOf } from '../auth.ts';
import { send } from '../present.ts';
import { presentApiKey } from '../presenters/account.ts';
import { presentSpace } from '../presenters/spaces.ts';
import { addRoute } from '../route.ts';
import { dashboardPage } from './dashboard.ts';

export function claimRoutes(app: FastifyInstance): void {
  const { anonymous, spaces, config, clock } = app.services;

  const status = (s: SpaceRow) => {
    const expiry = effectiveExpiry(s);
    const now = clock.now().getTime();
    return {
      spaceId: s.id,
      title: s.title,
      slug: s.slug,
      liveUrl: spaces.liveUrlOf(s),
      claimed: s.anonymous !== 1,
      expired: s.disabled_reason === 'anonymous_expired',
      expiresAt: s.claim_expires_at,
      extendedTo: s.expiry_extended_to,
      purgeAfter: s.purge_after,
      secondsLeft: expiry ? Math.max(0, Math.floor((Date.parse(expiry) - now) / 1000)) : 0,
      signupOpen: config.signup === 'open',
    };
  };

  addRoute(app, {
    method: 'GET',
    url: '/v1/claim/status',
    operationId: 'getClaimStatus',
    summary: 'Claim status of an anonymous space',
    description: 'With the space key as bearer: the space, its deadline and whether it can still be claimed.',
    tags: ['Claim'],
    auth: { accept: ['space_key'] },
    responses: { 200: ClaimStatusResponse },
    handler: async (req, reply) => {
      const p = principalOf(req);
      const s = await spaces.resolve(p, p.spaceId ?? '', { includeDeleted: true });
      return send(reply, ClaimStatusResponse, { data: status(s) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/claim/visit',
    operationId: 'visitClaim',
    summary: 'Record a claim-page visit',
    description:
      'Called by the claim page: extends the deadline toward one hour from now, adding at most 6 h beyond the publish deadline (`expiryExtension.extendedTo`).',
    tags: ['Claim'],
    auth: { accept: ['space_key'] },
    responses: { 200: ClaimStatusResponse },
    handler: async (req, reply) => {
      const s = await anonymous.visit(principalOf(req));
      return send(reply, ClaimStatusResponse, { data: status(s) });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/claim',
    operationId: 'claimSpace',
    summary: 'Claim an anonymous space into a team',
    description:
      'A signed-in person (session or OAuth token) gives the space key; the space joins the chosen team (`private`, with the team’s access), and the key stops publishing. With `allowContinuation: true` the key becomes a one-use voucher: its next use answers 409 `space_claimed_credential_available`, and `POST /v1/claim/exchange` trades it for a publish key for this space.',
    tags: ['Claim'],
    auth: { accept: ['general'], scope: 'spaces:write' },
    body: ClaimBody,
    responses: { 200: ClaimResponse },
    handler: async (req, reply) => {
      const s = await anonymous.claim(principalOf(req), req.body.key, req.body.team, {
        allowContinuation: req.body.allowContinuation,
      });
      const d = await spaces.detail(s);
      return send(reply, ClaimResponse, { data: { space: presentSpace(spaces, d) } });
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/claim/exchange',
    operationId: 'exchangeClaimedSpaceKey',
    summary: 'Exchange a claimed space’s key for a publish key',
    description:
      'Agent continuation: with the key of a space claimed with `allowContinuation: true` as bearer, returns `data.credential.accessToken`, a durable API key that reads and publishes to that space only (preset `ci_deploy`, bound to the space; other spaces answer 404). It belongs to the person who claimed the space and is listed and revocable with their keys. Works once: again is 409 `continuation_used`; without the owner’s permission 403 `continuation_unavailable`; before a claim 409 `space_unclaimed`.',
    tags: ['Claim'],
    auth: { accept: ['claimed_space_key'] },
    responses: { 201: ContinuationResponse },
    handler: async (req, reply) => {
      const { space, key, token } = await anonymous.exchange(principalOf(req));
      return send(
        reply,
        ContinuationResponse,
        {
          data: {
            credential: { ...presentApiKey(key), accessToken: token },
            space: { id: space.id, slug: space.slug, liveUrl: spaces.liveUrlOf(space) },
          },
        },
        201,
      );
    },
  });

  addRoute(app, {
    method: 'POST',
    url: '/v1/claim/rotate',
    operationId: 'rotateClaimKey',
    summary: 'Rotate the space key',
    description: 'Issues a new space key and claim link; the key used for this request stops working.',
    tags: ['Claim'],
    auth: { accept: ['space_key'] },
    responses: { 200: RotateResponse },
    handler: async (req, reply) => {
      const { space, key } = await anonymous.rotate(principalOf(req));
      return send(reply, RotateResponse, {
        data: { key, claimUrl: anonymous.claimUrl(key), spaceId: space.id },
      });
    },
  });

  const page = dashboardPage(app.services);
  addRoute(app, {
    method: 'GET',
    url: '/claim',
    operationId: 'claimPage',
    summary: 'The claim page',
    tags: ['Claim'],
    auth: null,
    hidden: true,
    responses: { 200: 'HTML page' },
    // The dashboard's page: its script shows the claim page on this path, under the dashboard's CSP.
    handler: (req, reply) => page(req, reply),
  });
}
