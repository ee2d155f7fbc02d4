/**
 * What `env.STORAGE` accepts (behaviour §11): no empty objects, nothing a browser would run or render
 * as a page — HTML, JavaScript, SVG, PHP — and no executables, whatever type the upload declares.
 * The declared type and the first bytes are both checked; an object without a declared type gets the
 * type its bytes show, or `application/octet-stream`.
 */

/** Behaviour §18: an object is at most 5 MiB. */
export const MAX_OBJECT_BYTES = 5 * 1024 * 1024;

const REFUSED_TYPES = [
  /^text\/html\b/,
  /^application\/xhtml\+xml\b/,
  /^(text|application)\/(x-)?(java|ecma)script\b/,
  /^text\/jscript\b/,
  /^application\/x-javascript\b/,
  /^text\/x-javascript\b/,
  /^image\/svg\+xml\b/,
  /^(application|text)\/(x-)?(httpd-)?php\b/,
  /^application\/x-(msdownload|msdos-program|executable|elf|mach-binary|sh|csh|shellscript|bat|msi)\b/,
  /^application\/vnd\.microsoft\.portable-executable\b/,
  /^application\/(x-)?sharedlib\b/,
  /^text\/x-(sh|shellscript)\b/,
];

/** Leading bytes that give a type away, whatever the upload says. */
function sniffRefused(head: Buffer): string | null {
  if (head.length >= 2 && head[0] === 0x4d && head[1] === 0x5a) return 'a Windows executable';
  if (head.length >= 4 && head.readUInt32BE(0) === 0x7f454c46) return 'an ELF executable';
  if (head.length >= 4) {
    const m = head.readUInt32BE(0);
    if ([0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe].includes(m))
      return 'a Mach-O executable';
  }
  if (head.length >= 2 && head[0] === 0x23 && head[1] === 0x21) return 'a script (#!)';
  const text = head
    .subarray(0, 512)
    .toString('latin1')
    .replace(/^\uFEFF|^\xEF\xBB\xBF/, '')
    .trimStart()
    .toLowerCase();
  if (/^<!doctype\s+html|^<html[\s>]|^<head[\s>]|^<body[\s>]|^<script[\s>]|^<iframe[\s>]/.test(text))
    return 'HTML';
  if (/^<svg[\s>]|^<\?xml[^>]*>\s*(<!--[\s\S]*?-->\s*)*(<!doctype\s+svg|<svg[\s>])/.test(text)) return 'SVG';
  if (text.startsWith('<?php') || text.startsWith('<?=')) return 'PHP';
  return null;
}

function sniffType(head: Buffer): string {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (
    head.subarray(0, 6).toString('latin1') === 'GIF89a' ||
    head.subarray(0, 6).toString('latin1') === 'GIF87a'
  )
    return 'image/gif';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF' && head.subarray(8, 12).toString('latin1') === 'WEBP')
    return 'image/webp';
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'application/pdf';
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'application/zip';
  const text = head.toString('utf8').trimStart();
  if ((text.startsWith('{') || text.startsWith('[')) && !head.includes(0)) return 'application/json';
  if (!head.includes(0) && Buffer.from(head.toString('utf8'), 'utf8').equals(head))
    return 'text/plain; charset=utf-8';
  return 'application/octet-stream';
}

/** A media type's syntax (`type/subtype` and parameters), lowercased type; null when not one. */
function normalised(declared: string): string | null {
  const t = declared.trim();
  if (
    t.length > 255 ||
    !/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+(\s*;\s*[a-z0-9!#$&^_.+-]+=("[^"]*"|[^;"\s]*))*$/i.test(t)
  )
    return null;
  const [type, ...params] = t.split(';');
  return [type!.toLowerCase(), ...params.map((p) => p.trim())].join('; ');
}

export type TypeVerdict =
  | { ok: true; contentType: string }
  | { ok: false; code: 'storage_object_empty' | 'storage_type_refused'; reason: string };

/** The stored type of an upload, or why it is refused (`head`: its first bytes, up to 512). */
export function checkObjectType(
  declared: string | null | undefined,
  head: Buffer,
  size: number,
): TypeVerdict {
  if (size === 0)
    return { ok: false, code: 'storage_object_empty', reason: 'An object needs at least one byte.' };
  let contentType: string;
  if (declared && declared.trim() !== '') {
    const n = normalised(declared);
    if (!n)
      return {
        ok: false,
        code: 'storage_type_refused',
        reason: `"${declared.slice(0, 80)}" is not a media type.`,
      };
    contentType = n;
  } else contentType = sniffType(head);
  if (REFUSED_TYPES.some((re) => re.test(contentType)))
    return {
      ok: false,
      code: 'storage_type_refused',
      reason: `${contentType.split(';')[0]} is not stored: no HTML, JavaScript, SVG, PHP or executables.`,
    };
  const what = sniffRefused(head);
  if (what)
    return {
      ok: false,
      code: 'storage_type_refused',
      reason: `The bytes are ${what}, which is not stored (whatever the declared type).`,
    };
  return { ok: true, contentType };
}
