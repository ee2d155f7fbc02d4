import type { CodeInfo } from '../../errors/catalog.ts';
import { DocsError, SLUG_PATTERN } from './loader.ts';
import type { DocPage } from './types.ts';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

/** Why a code of this status happens and what generally helps, when the catalog says no more. */
function byStatus(status: number): { why: string; todo: string } {
  if (status === 401)
    return {
      why: 'The request carried no credential, or one the server does not accept (unknown, expired, revoked).',
      todo: 'Send a valid credential as `Authorization: Bearer <token>`; sign in again or create a new API key if yours stopped working.',
    };
  if (status === 403)
    return {
      why: 'The credential is known, but it may not do this: its scopes, its role in the team or the server’s settings forbid it.',
      todo: 'Use a credential with the scope or role the operation needs, or ask a team owner or admin.',
    };
  if (status === 404)
    return {
      why: 'Nothing exists at the address, or it belongs to a team your credential cannot see (the API answers 404 rather than revealing it).',
      todo: 'Check the id or slug and that your credential belongs to the right team.',
    };
  if (status === 409 || status === 412)
    return {
      why: 'The request conflicts with the current state of the resource.',
      todo: 'Read the resource again, then retry the change against its current state.',
    };
  if (status === 413)
    return { why: 'The request is larger than the limit.', todo: 'Send less data per request.' };
  if (status === 429)
    return {
      why: 'Too many requests in a short time.',
      todo: 'Wait for the number of seconds in the `Retry-After` header, then retry.',
    };
  if (status >= 500)
    return {
      why: 'The server could not complete the request; nothing you sent was wrong.',
      todo: 'Retry after a short wait. If it keeps failing, report it and quote the `requestId`.',
    };
  return {
    why: 'The request breaks a rule of the API.',
    todo: 'Read `detail` (and `pointer`, when present), correct the request and send it again.',
  };
}

function stripTitle(body: string): string {
  return body.replace(/^#\s[^\n]*\n+/, '').trim();
}

/**
 * One page per catalog code (slug `errors/<code>`). A hand-written `docs/errors/<code>.md` extends the
 * generated page: its front matter wins, its body goes under "Why it happens"; the status, the
 * example problem and the catalog's suggestions and commands stay generated, so they can't drift.
 */
export function errorPages(
  catalog: Record<string, CodeInfo>,
  titleOf: (code: string) => string,
  overrides: DocPage[],
): DocPage[] {
  const byCode = new Map<string, DocPage>();
  for (const o of overrides) {
    const code = o.slug.slice('errors/'.length);
    if (!Object.hasOwn(catalog, code))
      throw new DocsError(o.source, `"${o.slug}" documents an error code that is not in the catalog`);
    if (o.category !== 'error')
      throw new DocsError(o.source, 'a page under errors/ must have category "error"');
    byCode.set(code, o);
  }
  return Object.entries(catalog).map(([code, info]) => {
    const o = byCode.get(code);
    const generic = byStatus(info.status);
    const title = o?.title ?? titleOf(code);
    const example: Record<string, unknown> = {
      type: `https://spaces.example/docs/errors/${code}`,
      title: titleOf(code),
      status: info.status,
      detail: info.summary,
      code,
    };
    if (code === 'validation_error') example.pointer = '/name';
    if (info.suggestions?.length) example.suggestions = info.suggestions;
    if (info.next?.length) example.next = info.next;
    example.requestId = 'req_…';
    const parts = [
      `# ${title}`,
      `Code \`${code}\` · HTTP ${info.status}${STATUS_TEXT[info.status] ? ` ${STATUS_TEXT[info.status]}` : ''}`,
      info.summary,
      '## Why it happens',
      o ? stripTitle(o.body) : generic.why,
      '## What to do',
      info.suggestions?.length ? info.suggestions.map((s) => `- ${s}`).join('\n') : generic.todo,
    ];
    if (info.next?.length) {
      parts.push('## Run next', 'Copy-pasteable commands (also in the problem’s `next`):');
      parts.push(`\`\`\`sh\n${info.next.join('\n')}\n\`\`\``);
    }
    parts.push(
      '## The problem document',
      `Responses with this code are \`application/problem+json\` (RFC 9457). Match on \`code\`, never on \`title\` or \`detail\`; quote \`requestId\` when you report a problem. For example:`,
      `\`\`\`json\n${JSON.stringify(example, null, 2)}\n\`\`\``,
      'See also: [API conventions](/docs/api-conventions).',
    );
    return {
      slug: `errors/${code}`,
      title,
      summary: o?.summary ?? info.summary,
      category: 'error',
      tier: o?.tier ?? 'reference',
      keywords: [
        ...new Set([
          code,
          ...code.split('_'),
          String(info.status),
          'error',
          'problem',
          ...(o?.keywords ?? []),
        ]),
      ],
      body: `${parts.join('\n\n')}\n`,
      order: o?.order ?? null,
      source: o ? o.source : `generated:catalog/${code}`,
    };
  });
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  deprecated?: boolean;
  tags?: string[];
  parameters?: Array<{
    name: string;
    in: string;
    required?: boolean;
    schema?: Record<string, unknown>;
    description?: string;
  }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, { schema?: Record<string, unknown> }> }
  >;
  security?: Array<Record<string, string[]>>;
  'x-required-scope'?: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head'];

export function tagSlug(tag: string): string {
  return `api/${
    tag
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'other'
  }`;
}

function schemaRef(s: Record<string, unknown> | undefined): string {
  if (!s) return '—';
  const ref = s.$ref;
  if (typeof ref === 'string') {
    const name = ref.split('/').pop()!;
    return `[\`${name}\`](/schemas/${name}.json)`;
  }
  if (typeof s.type === 'string') return `\`${s.type}\``;
  return 'JSON';
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function paramType(s: Record<string, unknown> | undefined): string {
  if (!s) return '';
  const bits: string[] = [];
  if (Array.isArray(s.enum)) bits.push(s.enum.map((v) => `\`${v}\``).join(' \\| '));
  else if (typeof s.type === 'string') bits.push(s.type);
  if (s.minimum !== undefined || s.maximum !== undefined) bits.push(`${s.minimum ?? ''}..${s.maximum ?? ''}`);
  if (s.minLength !== undefined || s.maxLength !== undefined)
    bits.push(`length ${s.minLength ?? 0}..${s.maxLength ?? '∞'}`);
  if (s.default !== undefined) bits.push(`default \`${JSON.stringify(s.default)}\``);
  return bits.join(', ');
}

function authLine(op: OpenApiOperation): string {
  const sec = op.security ?? [];
  if (sec.length === 0) return 'No credential needed.';
  const kinds: string[] = [];
  if (sec.some((s) => 'bearer' in s)) kinds.push('a bearer credential (session, API key, OAuth token)');
  if (sec.some((s) => 'spaceKey' in s)) kinds.push('a space key (`sfc_`)');
  let line = `Credential: ${kinds.join(' or ')}`;
  if (op['x-required-scope'])
    line += `; scope \`${op['x-required-scope']}\` for credentials other than sessions`;
  if (sec.some((s) => Object.keys(s).length === 0)) line += '; optional';
  return `${line}.`;
}

/** One reference page per OpenAPI tag, built from the same document `GET /v1/openapi.json` serves. */
export function apiPages(openapi: Record<string, unknown>): DocPage[] {
  const paths = (openapi.paths ?? {}) as Record<string, Record<string, OpenApiOperation>>;
  const byTag = new Map<string, Array<{ method: string; path: string; op: OpenApiOperation }>>();
  for (const [p, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      for (const tag of op.tags?.length ? op.tags : ['Other']) {
        if (!byTag.has(tag)) byTag.set(tag, []);
        byTag.get(tag)!.push({ method: method.toUpperCase(), path: p, op });
      }
    }
  }
  const pages: DocPage[] = [];
  for (const [tag, ops] of [...byTag.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    ops.sort(
      (a, b) =>
        a.path.localeCompare(b.path) ||
        METHODS.indexOf(a.method.toLowerCase()) - METHODS.indexOf(b.method.toLowerCase()),
    );
    const slug = tagSlug(tag);
    if (!SLUG_PATTERN.test(slug)) continue;
    const parts = [
      `# ${tag} API`,
      `Reference of the ${ops.length} ${ops.length === 1 ? 'operation' : 'operations'} tagged “${tag}”, generated from the [OpenAPI document](/v1/openapi.json). Errors are problem documents; see [API conventions](/docs/api-conventions).`,
      ops.map(({ method, path: p, op }) => `- \`${method} ${p}\` — ${op.summary ?? ''}`).join('\n'),
    ];
    for (const { method, path: p, op } of ops) {
      parts.push(`## ${method} ${p}`);
      const head = [
        `**${op.summary ?? op.operationId ?? ''}**${op.operationId ? ` (operation \`${op.operationId}\`)` : ''}`,
      ];
      if (op.deprecated)
        head.push(
          '**Deprecated**: it answers with `Deprecation` and `Sunset` headers; see the [deprecation policy](/docs/deprecation-policy).',
        );
      if (op.description) head.push(op.description);
      head.push(authLine(op));
      parts.push(head.join('\n\n'));
      const params = op.parameters ?? [];
      if (params.length) {
        parts.push(
          [
            '| Parameter | In | Required | Type | Description |',
            '|---|---|---|---|---|',
            ...params.map(
              (x) =>
                `| \`${x.name}\` | ${x.in} | ${x.required ? 'yes' : 'no'} | ${cell(paramType(x.schema))} | ${cell(x.description ?? '')} |`,
            ),
          ].join('\n'),
        );
      }
      if (op.requestBody?.content) {
        const types = Object.entries(op.requestBody.content);
        parts.push(
          `Request body${op.requestBody.required ? '' : ' (optional)'}: ${types.map(([t, c]) => `\`${t}\` ${schemaRef(c.schema)}`).join(', ')}`,
        );
      }
      const res = Object.entries(op.responses ?? {}).filter(([s]) => s !== 'default');
      if (res.length) {
        parts.push(
          res
            .map(([s, r]) => {
              const json = r.content?.['application/json']?.schema;
              return `- ${s}: ${json ? schemaRef(json) : cell(r.description ?? '')}`;
            })
            .join('\n'),
        );
      }
    }
    const ids = ops.map((o) => o.op.operationId).filter((x): x is string => !!x);
    pages.push({
      slug,
      title: `${tag} API`,
      summary: `${ops.length === 1 ? 'The endpoint' : `The ${ops.length} endpoints`} tagged ${tag}: ${[...new Set(ops.map((o) => `${o.method} ${o.path}`))].slice(0, 6).join(', ')}${ops.length > 6 ? ', …' : ''}.`,
      category: 'api',
      tier: 'reference',
      keywords: [...new Set(['api', 'reference', 'endpoint', tag.toLowerCase(), ...ids])],
      body: `${parts.join('\n\n')}\n`,
      order: null,
      source: `generated:openapi/${tag}`,
    });
  }
  return pages;
}
