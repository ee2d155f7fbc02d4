/** Web content an unclaimed anonymous space may serve; anything else waits for the claim. */
export const ANONYMOUS_TYPES =
  /^(text\/|image\/|font\/|application\/(json|xml|javascript|ecmascript|gzip|manifest\+json|ld\+json|rss\+xml|atom\+xml|wasm)|[a-z]+\/[a-z0-9.+-]*\+xml)/;

/** HTML, which a team space's released tags join (the edge then serves it with injection). */
export const HTML_TYPE = /^text\/html|^application\/xhtml\+xml/;
