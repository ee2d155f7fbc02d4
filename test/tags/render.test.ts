import { describe, expect, it } from 'vitest';
import { renderTagsForSpace, scriptText, type Tag } from '../../src/domain/tags/render.ts';
import type { SpaceConfig } from '../../src/schemas/space-config.ts';

const tag = (over: Partial<Tag> = {}): Tag => ({
  id: 'core',
  name: null,
  type: 'script',
  consentCategory: 'necessary',
  config: { code: 'window.core = 1;' },
  triggers: [],
  ...over,
});

/** The only `</script` sequences in the output close the elements this renderer opened. */
function closersMatchElements(html: string, elements: number): void {
  expect((html.match(/<\/script/gi) ?? []).length).toBe(elements);
}

describe('renderTagsForSpace', () => {
  it('runs necessary inline code at load', () => {
    expect(renderTagsForSpace([tag()], {})).toBe('<script data-tag-id="core">window.core = 1;</script>');
  });

  it('neutralises </script and <!-- inside code so the element can’t be closed early', () => {
    const code = 'var s = "</script><script>alert(1)</script>"; var t = "</SCRIPT >"; // <!-- x';
    const html = renderTagsForSpace([tag({ config: { code } })], null);
    closersMatchElements(html, 1);
    expect(html).not.toContain('<!--');
    expect(html).toContain('"<\\/script><script>alert(1)<\\/script>"');
    expect(html).toContain('"<\\/SCRIPT >"');
    expect(scriptText('a</script>b')).toBe('a<\\/script>b');
  });

  it('loads necessary external scripts and pixels with escaped URLs', () => {
    const html = renderTagsForSpace(
      [
        tag({ id: 'ext', config: { src: 'https://cdn.example.com/a.js?x=1&y=2' } }),
        tag({ id: 'px', type: 'image', config: { src: 'https://px.example.com/p.gif?a=1&b=2' } }),
      ],
      undefined,
    );
    expect(html).toBe(
      [
        '<script src="https://cdn.example.com/a.js?x=1&#38;y=2" async data-tag-id="ext"></script>',
        '<img src="https://px.example.com/p.gif?a=1&#38;b=2" alt="" width="1" height="1" style="display:none" data-tag-id="px">',
      ].join('\n'),
    );
  });

  it('escapes tag ids in attributes', () => {
    const html = renderTagsForSpace([tag({ id: '"><img src=x onerror=alert(1)>' })], {});
    expect(html).toContain('data-tag-id="&#34;&#62;&#60;img src=x onerror=alert(1)&#62;"');
    expect(html).not.toContain('<img');
  });

  it('renders non-necessary tags inert, with their consent category, for a consent manager', () => {
    const html = renderTagsForSpace(
      [
        tag({ id: 'a', consentCategory: 'analytics', config: { code: 'track()' } }),
        tag({ id: 'm', consentCategory: 'marketing', config: { src: 'https://ads.example.com/x.js' } }),
        tag({
          id: 'f',
          consentCategory: 'functional',
          type: 'image',
          config: { src: 'https://p.example.com/p' },
        }),
      ],
      {},
    );
    const lines = html.split('\n');
    expect(lines[0]).toBe(
      '<script type="text/plain" data-consent-category="analytics" data-tag-id="a">track()</script>',
    );
    expect(lines[1]).toMatch(
      /^<script type="text\/plain" data-consent-category="marketing" data-tag-id="m">.*s\.src="https:\/\/ads\.example\.com\/x\.js".*<\/script>$/,
    );
    expect(lines[2]).toBe(
      '<script type="text/plain" data-consent-category="functional" data-tag-id="f">new Image().src="https://p.example.com/p";</script>',
    );
    // Nothing but necessary tags is executable as delivered.
    expect(html).not.toMatch(/<script(?![^>]*type="text\/plain")[^>]*>/);
    expect(html).not.toContain('<img');
  });

  it('wires click and custom triggers; selectors and event names are safe literals', () => {
    const html = renderTagsForSpace(
      [
        tag({
          id: 'c',
          triggers: [
            { id: 't1', type: 'click', selector: 'a.buy</script><b>' },
            { id: 't2', type: 'custom', eventName: 'checkout' },
          ],
        }),
      ],
      {},
    );
    closersMatchElements(html, 1);
    expect(html).toContain('e.target.closest("a.buy\\u003c/script\\u003e\\u003cb\\u003e")');
    expect(html).toContain('window.addEventListener("checkout"');
    expect(html).toContain('var f=function(){window.core = 1;');
    // A pageview trigger runs at load, whatever else it has.
    const load = renderTagsForSpace(
      [
        tag({
          triggers: [
            { id: 'p', type: 'pageview' },
            { id: 'c', type: 'click' },
          ],
        }),
      ],
      {},
    );
    expect(load).toBe('<script data-tag-id="core">window.core = 1;</script>');
  });

  it('drops tags that could not have passed graph validation (defence in depth)', () => {
    const html = renderTagsForSpace(
      [
        tag({ id: 'js', config: { src: 'javascript:alert(1)' } }),
        tag({ id: 'http', type: 'image', config: { src: 'http://plain.example.com/p' } }),
        tag({ id: 'quote', type: 'image', config: { src: 'https://p.example.com/"onerror="alert(1)' } }),
        tag({ id: 'creds', config: { src: 'https://user:pw@p.example.com/a.js' } }),
        tag({ id: 'kind', type: 'html' as never, config: { code: 'x' } }),
      ],
      {},
    );
    expect(html).toBe('');
  });

  describe('space settings', () => {
    const tags = [tag({ id: 'one' }), tag({ id: 'two', config: { code: 'two()' } })];
    const sp = (superpowers: NonNullable<SpaceConfig['superpowers']>): SpaceConfig => ({ superpowers });

    it('inherits every tag by default', () => {
      expect(renderTagsForSpace(tags, {}).split('\n')).toHaveLength(2);
      expect(
        renderTagsForSpace(tags, sp({ enabled: true, tags: { inheritance: { inherited: true } } })).split(
          '\n',
        ),
      ).toHaveLength(2);
    });
    it('renders nothing when superpowers are off, injection is disabled or inheritance is off', () => {
      expect(renderTagsForSpace(tags, sp({ enabled: false }))).toBe('');
      expect(renderTagsForSpace(tags, sp({ disable_all_injection: true }))).toBe('');
      expect(renderTagsForSpace(tags, sp({ tags: { inheritance: { inherited: false } } }))).toBe('');
    });
    it('drops overridden tags by tagId; disabled: false keeps them', () => {
      const html = renderTagsForSpace(
        tags,
        sp({
          tags: {
            inheritance: {
              overrides: [
                { tagId: 'one', disabled: true, reason: 'not here' },
                { tagId: 'two', disabled: false },
              ],
            },
          },
        }),
      );
      expect(html).toBe('<script data-tag-id="two">two()</script>');
    });
    it('renders nothing for no tags', () => {
      expect(renderTagsForSpace([], {})).toBe('');
    });
  });
});
