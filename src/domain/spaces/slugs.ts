import { randomInt } from 'node:crypto';

/**
 * Space slugs name managed hostnames (`<slug>.<base domain>`), so they are unique server-wide:
 * 2..55 characters of lowercase letters and digits in runs joined by single dashes. `--` never
 * appears because it separates a channel or version from the name in preview hostnames.
 */
export const SPACE_SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Names that would collide with the service's own hostnames or confuse visitors. */
export const RESERVED_SLUGS = new Set([
  'www',
  'api',
  'app',
  'admin',
  'administrator',
  'auth',
  'login',
  'logout',
  'signin',
  'signup',
  'account',
  'accounts',
  'dashboard',
  'console',
  'docs',
  'doc',
  'help',
  'support',
  'status',
  'mail',
  'email',
  'smtp',
  'imap',
  'pop',
  'ftp',
  'ns',
  'ns1',
  'ns2',
  'dns',
  'cdn',
  'static',
  'assets',
  'media',
  'files',
  'blob',
  'blobs',
  'claim',
  'spaces',
  'space',
  'service',
  'system',
  'root',
  'security',
  'abuse',
  'billing',
  'oauth',
  'device',
  'localhost',
  'internal',
  'test',
  'staging',
  'preview',
  'live',
]);

export type SlugProblem = 'slug_invalid' | 'slug_reserved' | null;

export function checkSlug(slug: string): SlugProblem {
  if (slug.length < 2 || slug.length > 55 || !SPACE_SLUG.test(slug)) return 'slug_invalid';
  if (RESERVED_SLUGS.has(slug) || /^v\d+$/.test(slug) || slug.startsWith('ver-') || slug.startsWith('spc-')) {
    return 'slug_reserved';
  }
  return null;
}

const ADJECTIVES = [
  'amber',
  'bold',
  'brave',
  'bright',
  'calm',
  'clever',
  'cosmic',
  'crisp',
  'daring',
  'eager',
  'fancy',
  'gentle',
  'golden',
  'happy',
  'humble',
  'jolly',
  'keen',
  'lively',
  'lucky',
  'mellow',
  'misty',
  'nimble',
  'noble',
  'plucky',
  'proud',
  'quick',
  'quiet',
  'rapid',
  'rosy',
  'shiny',
  'silent',
  'silver',
  'sunny',
  'swift',
  'tidy',
  'vivid',
  'warm',
  'wild',
  'witty',
  'zesty',
];
const NOUNS = [
  'otter',
  'falcon',
  'maple',
  'river',
  'comet',
  'harbor',
  'meadow',
  'pebble',
  'lantern',
  'canyon',
  'willow',
  'sparrow',
  'summit',
  'breeze',
  'ember',
  'glacier',
  'orchid',
  'panda',
  'quartz',
  'raven',
  'saffron',
  'tundra',
  'violet',
  'walrus',
  'yarrow',
  'badger',
  'cedar',
  'dune',
  'fjord',
  'grove',
  'heron',
  'island',
  'jasper',
  'koala',
  'lagoon',
  'nebula',
  'oasis',
  'prairie',
  'reef',
  'tulip',
];

/** A readable generated slug: two words and a number, e.g. `quiet-otter-4821`. */
export function generateSlug(): string {
  return `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}-${randomInt(1000, 10000)}`;
}

/** Derives a slug candidate from free text (a title or a repository name). */
export function slugify(text: string): string {
  const s = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f'’]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 55)
    .replace(/-+$/g, '');
  return s.length >= 2 ? s : '';
}
