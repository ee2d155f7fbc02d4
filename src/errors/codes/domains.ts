import type { CodeTable } from '../catalog.ts';

/** Custom domains: inventory, binding, DNS verification. */
export const domainCodes = {
  invalid_domain_name: {
    status: 400,
    summary:
      'The hostname is not one a custom domain can use: not a DNS name, an IP address, a port, a trailing dot, `localhost`, or a public suffix such as `co.uk`.',
    suggestions: [
      'Give the hostname alone, as people type it in a browser: `www.example.com` (no scheme, port, path or trailing dot).',
    ],
  },
  domain_reserved_suffix: {
    status: 400,
    summary:
      'Hostnames under this server’s base domain are managed by Spaces and cannot be added as custom domains.',
  },
  domain_wildcard_label: {
    status: 400,
    summary: 'A wildcard may only be one leading `*.` label (`*.example.com`).',
  },
  domain_wildcard_not_enabled: {
    status: 400,
    summary:
      'Wildcard domains (`*.example.com`) are not enabled: the team has not turned them on (`details.reason: "team"`), or this server terminates TLS without a DNS-01 provider for their certificates (`details.reason: "server"`).',
    suggestions: [
      'A team owner or admin turns them on with `PATCH /v1/teams/{teamId}/domain-settings` `{"wildcardEnabled": true}`.',
      'The operator configures the RFC 2136 DNS provider (`SPACES_RFC2136_*`), see the domains guide.',
    ],
  },
  domain_already_exists: {
    status: 409,
    summary: 'The team already has this hostname in its domain inventory.',
    suggestions: ['Bind the existing domain to the space with `PATCH /v1/domains/{domainId}`.'],
  },
  domain_bound: {
    status: 409,
    summary:
      'The domain is bound to a space; unbind it (`spaceId: null`) before deleting it from the inventory.',
  },
  domain_in_use: {
    status: 409,
    summary:
      'Another team has verified this hostname and its ownership record is still published; both cannot serve it.',
    suggestions: ['Remove the other team’s `_spaces-challenge` TXT value from DNS, then verify again.'],
  },
  verification_required: {
    status: 409,
    summary: 'This needs a verified domain: publish its ownership TXT record and verify it first.',
    suggestions: ['`POST /v1/domains/{domainId}/verify` checks the records now and lists what DNS holds.'],
  },
  domain_redirect_invalid: {
    status: 400,
    summary: 'A redirect domain needs a target hostname and one of the statuses 301, 302, 307 or 308.',
  },
} satisfies CodeTable;
