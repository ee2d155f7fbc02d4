import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ApiError } from '../../errors/problem.ts';
import { forbiddenAddressReason } from '../../net/outbound.ts';

/**
 * Which repository URLs a build may clone, and the git options every clone runs with. Public
 * `https` only by default; `SPACES_GIT_ALLOW` may add `file` (local paths), `loopback`, `private`
 * (RFC 1918, link-local, ULA…) and `http`. Addresses are checked after resolving the name, and git
 * is then pinned to the address checked (`http.curloptResolve`), so a rebinding name can't switch.
 */

/** Whether an address is public, loopback or otherwise private, by the shared outbound guard's rules. */
function addressClass(ip: string): 'public' | 'loopback' | 'private' {
  const reason = forbiddenAddressReason(ip);
  if (reason === null) return 'public';
  return reason === 'loopback' ? 'loopback' : 'private';
}

export function checkRef(ref: string): void {
  if (
    !ref ||
    ref.length > 255 ||
    ref.startsWith('-') ||
    ref.includes('..') ||
    ref.endsWith('.lock') ||
    ref.endsWith('/') ||
    /[\s~^:?*[\\\x00-\x1f\x7f]/.test(ref) ||
    ref.includes('@{')
  ) {
    throw new ApiError('invalid_git_ref', `"${ref}" is not a ref git accepts.`, { pointer: '/source/ref' });
  }
}

export interface CloneTarget {
  url: string;
  /** `-c` options that pin git to the address checked. */
  pins: string[];
  protocol: 'https' | 'http' | 'file';
}

/** Checks a clone URL against the policy; throws `git_source_refused` with the reason. */
export async function checkCloneUrl(raw: string, allow: ReadonlySet<string>): Promise<CloneTarget> {
  const refuse = (why: string): never => {
    throw new ApiError('git_source_refused', `${why}.`, { pointer: '/source/url', details: { url: raw } });
  };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('The URL is not an absolute URL');
  }
  if (url.protocol === 'file:') {
    if (!allow.has('file')) refuse('Cloning from local paths (`file:`) is not allowed on this server');
    if (url.host) refuse('A `file:` URL names no host');
    return { url: url.href, pins: [], protocol: 'file' };
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allow.has('http'))) {
    refuse(`Only https repositories can be cloned (not ${url.protocol.replace(':', '')})`);
  }
  if (url.username || url.password) refuse('Put credentials in a repository connection, not in the URL');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [host]
    : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
  if (!addresses.length) refuse(`The host ${host} does not resolve`);
  for (const a of addresses) {
    const cls = addressClass(a);
    if (cls === 'loopback' && !allow.has('loopback')) refuse(`${host} is a loopback address`);
    if (cls === 'private' && !allow.has('private')) refuse(`${host} is a private or reserved address (${a})`);
  }
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const pins = isIP(host) ? [] : ['-c', `http.curloptResolve=${host}:${port}:${addresses[0]}`];
  return { url: url.href, pins, protocol: url.protocol === 'https:' ? 'https' : 'http' };
}

/**
 * `git clone` arguments with every hardening that applies to an untrusted repository: only the one
 * protocol the URL uses, no hooks, no submodules, no symlinks checked out as links, no credential
 * prompts, no filters or fsmonitor run, a shallow history, and git's own safety checks on names.
 */
export function cloneArgs(
  target: CloneTarget,
  ref: string | null,
  dest: string,
  emptyHooks: string,
): string[] {
  const args = [
    '-c',
    'protocol.allow=never',
    '-c',
    `protocol.${target.protocol}.allow=always`,
    '-c',
    `core.hooksPath=${emptyHooks}`,
    '-c',
    'core.symlinks=false',
    '-c',
    'core.fsmonitor=false',
    '-c',
    'core.protectNTFS=true',
    '-c',
    'core.protectHFS=true',
    '-c',
    'submodule.recurse=false',
    '-c',
    'transfer.fsckObjects=true',
    '-c',
    'http.followRedirects=false',
    '-c',
    'credential.helper=',
    '-c',
    'core.askPass=',
    '-c',
    'init.templateDir=',
    ...target.pins,
    'clone',
    '--depth',
    '1',
    '--no-recurse-submodules',
    '--no-tags',
    '--single-branch',
    ...(ref ? ['--branch', ref] : []),
    '--',
    target.url,
    dest,
  ];
  return args;
}

/** The environment git runs with: nothing of the server's but PATH, no prompts, no system/global config. */
export function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_PROTOCOL_FROM_USER: '0',
    LC_ALL: 'C',
  };
}
