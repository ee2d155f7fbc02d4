import type { Services } from '../../services.ts';
import { type ConsentCategory, isSafeTagUrl, type TagGraph } from './graph.ts';

/**
 * The part of a space's settings (SpaceConfig) tag rendering reads; structural, so the edge can pass
 * a SpaceConfig or its own injection view of one.
 */
export interface TagRenderSettings {
  superpowers?: {
    enabled?: boolean;
    disable_all_injection?: boolean;
    tags?: {
      inheritance?: {
        inherited?: boolean;
        overrides?: ReadonlyArray<{ tagId: string; disabled?: boolean; reason?: string | null }>;
      };
    };
  } | null;
}

export interface TagTrigger {
  id: string;
  type: 'pageview' | 'click' | 'custom';
  /** click: CSS selector the click must come from (closest ancestor match); any click when absent. */
  selector?: string;
  /** custom: the DOM event name dispatched on `window`. */
  eventName?: string;
}

/** A released tag, ready to render: its trigger ids resolved against the graph's triggers. */
export interface Tag {
  id: string;
  name: string | null;
  type: 'script' | 'image';
  consentCategory: ConsentCategory;
  config: { code?: string; src?: string; [k: string]: unknown };
  triggers: TagTrigger[];
}

/** The production release's enabled tags of a team, in graph order; empty without a release. */
export async function releasedTeamTags(services: Pick<Services, 'tags'>, teamId: string): Promise<Tag[]> {
  return tagsOfGraph(await services.tags.releasedGraph(teamId, 'production'));
}

function tagsOfGraph(graph: TagGraph | null): Tag[] {
  if (!graph) return [];
  const triggers = new Map<string, TagTrigger>();
  for (const t of graph.triggers) triggers.set(String(t.id), t as unknown as TagTrigger);
  return graph.tags
    .filter((t) => t.enabled !== false)
    .map((t) => ({
      id: String(t.id),
      name: typeof t.name === 'string' ? t.name : null,
      type: t.type as Tag['type'],
      consentCategory: t.consentCategory as ConsentCategory,
      config: (t.config ?? {}) as Tag['config'],
      triggers: ((t.triggers as string[] | undefined) ?? [])
        .map((id) => triggers.get(id))
        .filter((x): x is TagTrigger => x !== undefined),
    }));
}

/** Whether a space's settings turn team tags off, so no lookup is needed. */
function tagsOff(config: TagRenderSettings | null | undefined): boolean {
  const sp = config?.superpowers;
  return (
    sp?.enabled === false || sp?.disable_all_injection === true || sp?.tags?.inheritance?.inherited === false
  );
}

/**
 * {@link teamTagsHtmlForSpace} without waiting: the HTML when the team's released graph is cached,
 * `undefined` when it would take a database read.
 */
export function teamTagsHtmlIfCached(
  services: Pick<Services, 'tags'>,
  space: { teamId: string | null; config: TagRenderSettings | null | undefined },
): string | undefined {
  if (!space.teamId || tagsOff(space.config)) return '';
  const graph = services.tags.peekReleasedGraph(space.teamId, 'production');
  if (graph === undefined) return undefined;
  return graph === null ? '' : renderTagsForSpace(tagsOfGraph(graph), space.config);
}

/**
 * The edge's one call per HTML page: the team's released tags rendered for a space with its settings.
 * Spaces without a team (anonymous ones) get nothing.
 */
export async function teamTagsHtmlForSpace(
  services: Pick<Services, 'tags'>,
  space: { teamId: string | null; config: TagRenderSettings | null | undefined },
): Promise<string> {
  // Skip the lookup entirely when the space would render nothing anyway.
  if (!space.teamId || tagsOff(space.config)) return '';
  return renderTagsForSpace(await releasedTeamTags(services, space.teamId), space.config);
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Makes text safe as the body of a `<script>` element: `</script` and `<!--` can't end or confuse the
 * element (`<\/script` and `<\!--` mean the same inside JavaScript strings and regexes).
 */
export function scriptText(code: string): string {
  return code.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** A JavaScript literal safe inside a `<script>` element. */
function jsLiteral(v: unknown): string {
  return JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** JavaScript that performs the tag once (run code, load a script, fire a pixel). */
function fireJs(tag: Tag): string {
  if (tag.type === 'image') return `new Image().src=${jsLiteral(tag.config.src)};`;
  if (tag.config.src !== undefined) {
    return `var s=document.createElement('script');s.async=true;s.src=${jsLiteral(tag.config.src)};document.head.appendChild(s);`;
  }
  return scriptText(String(tag.config.code ?? ''));
}

/** Runs at page load when the tag has no triggers or a pageview trigger. */
function onLoad(tag: Tag): boolean {
  return tag.triggers.length === 0 || tag.triggers.some((t) => t.type === 'pageview');
}

/** Wraps the tag in listeners for its click and custom triggers. */
function listenerJs(tag: Tag): string {
  const parts = [`var f=function(){${fireJs(tag)}\n};`];
  for (const t of tag.triggers) {
    if (t.type === 'click') {
      parts.push(
        t.selector
          ? `document.addEventListener('click',function(e){if(e.target&&e.target.closest&&e.target.closest(${jsLiteral(t.selector)}))f();},true);`
          : `document.addEventListener('click',function(){f();},true);`,
      );
    } else if (t.type === 'custom' && t.eventName) {
      parts.push(`window.addEventListener(${jsLiteral(t.eventName)},function(){f();});`);
    }
  }
  return `(function(){${parts.join('')}})();`;
}

function isRenderable(tag: Tag): boolean {
  if (tag.type === 'image') return typeof tag.config.src === 'string' && isSafeTagUrl(tag.config.src);
  if (tag.type !== 'script') return false;
  if (tag.config.src !== undefined) return typeof tag.config.src === 'string' && isSafeTagUrl(tag.config.src);
  return typeof tag.config.code === 'string';
}

function renderTag(tag: Tag): string {
  const idAttr = `data-tag-id="${escapeHtml(tag.id)}"`;
  const necessary = tag.consentCategory === 'necessary';
  if (!necessary) {
    // Inert until a consent manager re-inserts it as JavaScript for an accepted category.
    const body = onLoad(tag) ? fireJs(tag) : listenerJs(tag);
    return `<script type="text/plain" data-consent-category="${escapeHtml(tag.consentCategory)}" ${idAttr}>${body}</script>`;
  }
  if (!onLoad(tag)) return `<script ${idAttr}>${listenerJs(tag)}</script>`;
  if (tag.type === 'image') {
    return `<img src="${escapeHtml(String(tag.config.src))}" alt="" width="1" height="1" style="display:none" ${idAttr}>`;
  }
  if (tag.config.src !== undefined) {
    return `<script src="${escapeHtml(String(tag.config.src))}" async ${idAttr}></script>`;
  }
  return `<script ${idAttr}>${scriptText(String(tag.config.code))}</script>`;
}

/**
 * The HTML the serving edge injects for a space: its team's released tags, after the space's
 * superpowers settings. Nothing when superpowers are off (`enabled: false`), injection is disabled
 * (`disable_all_injection`), or the space opted out of inheritance (`tags.inheritance.inherited:
 * false`); an override `{tagId, disabled: true}` drops that tag. Only `necessary` tags run
 * unconditionally; every other consent category is rendered inert (`type="text/plain"` with
 * `data-consent-category`) for a consent manager to activate.
 */
export function renderTagsForSpace(
  tags: readonly Tag[],
  config: TagRenderSettings | null | undefined,
): string {
  const sp = config?.superpowers;
  if (sp?.enabled === false || sp?.disable_all_injection === true) return '';
  const inheritance = sp?.tags?.inheritance;
  if (inheritance?.inherited === false) return '';
  const disabled = new Set(
    (inheritance?.overrides ?? []).filter((o) => o.disabled === true).map((o) => o.tagId),
  );
  return tags
    .filter((t) => !disabled.has(t.id) && isRenderable(t))
    .map(renderTag)
    .join('\n');
}
