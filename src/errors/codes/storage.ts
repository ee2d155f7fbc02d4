import type { CodeTable } from '../catalog.ts';

/** Object storage of runtime spaces, `env.STORAGE` (issue 26, behaviour §11). */
export const storageCodes = {
  storage_object_not_found: {
    status: 404,
    summary: 'The space’s store has no object with this id (or the read URL’s signature is not current).',
    suggestions: [
      'Object ids are 32 hex characters; `GET /v1/spaces/{spaceId}/storage` lists them. After `POST …/storage/rotate-read-key` old read URLs stop working: take the new `url` from the list.',
    ],
  },
  storage_object_too_large: {
    status: 413,
    summary: 'An object is at most 5 MiB.',
    suggestions: ['Store large files as part of a published version instead.'],
  },
  storage_object_empty: {
    status: 400,
    summary: 'An object needs at least one byte.',
  },
  storage_type_refused: {
    status: 415,
    summary:
      'The store keeps no HTML, JavaScript, SVG, PHP or executables — by declared type or by the first bytes — and needs a valid media type when one is given.',
    suggestions: ['Publish pages and scripts as files of a version; store data, images and documents.'],
  },
} satisfies CodeTable;
