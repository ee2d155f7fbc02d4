/**
 * The publisher's Open link to an unclaimed space (behaviour §3.4): the space key travels in the URL
 * fragment, which browsers never send, and the site's `/__/open` page hands it to the edge's broker
 * (src/serve/open-link.ts).
 */
export const OPEN_LINK_PATH = '/__/open';

/** `https://<site>/__/open#<space key>`. */
export function openLinkUrl(liveUrl: string, key: string): string {
  return `${liveUrl}${OPEN_LINK_PATH}#${encodeURIComponent(key)}`;
}
