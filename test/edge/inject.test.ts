import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import {
  buildInjection,
  createHtmlInjector,
  escapeHtml,
  type Injection,
  injectHtml,
  MAX_HELD_TAIL,
  makeInjection,
} from '../../src/serve/inject.ts';

const inj = makeInjection({ head: '[H]', bodyStart: '[S]', bodyEnd: '[E]' });

async function streamed(doc: string, injection: Injection, chunkSize: number): Promise<string> {
  const buf = Buffer.from(doc);
  const chunks: Buffer[] = [];
  for (let i = 0; i < buf.length; i += chunkSize) chunks.push(buf.subarray(i, i + chunkSize));
  return text(Readable.from(chunks).pipe(createHtmlInjector(injection)));
}

const cases: Array<[string, string, string]> = [
  [
    'a normal document',
    '<html><head><title>x</title></head><body class="a">hi</body></html>',
    '<html><head><title>x</title>[H]</head><body class="a">[S]hi[E]</body></html>',
  ],
  [
    'upper case tags',
    '<HTML><HEAD></HEAD><BODY>x</BODY></HTML>',
    '<HTML><HEAD>[H]</HEAD><BODY>[S]x[E]</BODY></HTML>',
  ],
  ['no head close', '<html><body>x</body></html>', '<html>[H]<body>[S]x[E]</body></html>'],
  ['no tags at all', 'just text', 'just text[H][S][E]'],
  ['no body close', '<head></head><body>x', '<head>[H]</head><body>[S]x[E]'],
  ['last </body> wins', '<body>a</body>b</body>c', '[H]<body>[S]a</body>b[E]</body>c'],
  ['<bodyx> is not body', '<head></head><bodyx>y</bodyx>', '<head>[H]</head><bodyx>y</bodyx>[S][E]'],
];

describe('HTML injector', () => {
  for (const [name, doc, want] of cases) {
    it(`${name} (buffer and every chunk size)`, async () => {
      expect(injectHtml(Buffer.from(doc), inj).toString()).toBe(want);
      for (const size of [1, 2, 3, 5, 7, 64]) {
        expect(await streamed(doc, inj, size), `chunk ${size}`).toBe(want);
      }
    });
  }

  it('keeps UTF-8 intact across chunk boundaries', async () => {
    const doc = '<head>é</head><body>日本語</body>';
    const want = '<head>é[H]</head><body>[S]日本語[E]</body>';
    for (const size of [1, 2, 3]) expect(await streamed(doc, inj, size)).toBe(want);
    const u = makeInjection({ head: '<!-- ünïcødé -->' });
    expect(injectHtml(Buffer.from('<head></head>'), u).toString()).toBe('<head><!-- ünïcødé --></head>');
  });

  it('does not hold more than the bounded tail after </body>', async () => {
    const tail = 'x'.repeat(MAX_HELD_TAIL + 10);
    const doc = `<body>a</body>${tail}`;
    const out = await streamed(doc, inj, 4096);
    expect(out).toBe(`[H]<body>[S]a[E]</body>${tail}`);
  });

  it('passes documents through untouched when there is nothing to inject', async () => {
    const doc = '<head></head><body></body>';
    const empty = makeInjection({});
    expect(injectHtml(Buffer.from(doc), empty).toString()).toBe(doc);
    expect(await streamed(doc, empty, 3)).toBe(doc);
  });

  it('keys injections by content', () => {
    expect(makeInjection({ head: 'a' }).key).toBe(makeInjection({ head: 'a' }).key);
    expect(makeInjection({ head: 'a' }).key).not.toBe(makeInjection({ bodyEnd: 'a' }).key);
  });
});

describe('buildInjection', () => {
  const full = {
    superpowers: {
      enabled: true,
      vendorAnalytics: { enabled: true, measurementId: 'G-ABC123' },
      vendorTagManager: { enabled: true, containerId: 'GTM-XYZ9' },
      javascriptTags: [
        { id: 'one"><img src=x>', name: 'One', enabled: true, code: 'window.one=1' },
        { id: 'off', name: 'Off', enabled: false, code: 'window.off=1' },
        { id: 'two', name: 'Two', enabled: true, code: 'window.two=2' },
      ],
    },
    collab: { ui: 'custom' as const },
  };

  it('orders analytics, tag manager, tags, collab stylesheet', () => {
    const b = buildInjection(full);
    const h = b.head;
    const ga = h.indexOf('gtag/js?id=G-ABC123');
    const gtm = h.indexOf('"GTM-XYZ9"');
    const one = h.indexOf('window.one=1');
    const two = h.indexOf('window.two=2');
    const css = h.indexOf('<link rel="stylesheet" href="/__service/collab.css">');
    expect(ga).toBeGreaterThan(-1);
    expect(ga).toBeLessThan(gtm);
    expect(gtm).toBeLessThan(one);
    expect(one).toBeLessThan(two);
    expect(two).toBeLessThan(css);
    expect(h).not.toContain('window.off');
    expect(h).toContain(`data-tag-id="${escapeHtml('one"><img src=x>')}"`);
    expect(h).not.toContain('<img src=x>');
    expect(b.bodyStart).toContain('ns.html?id=GTM-XYZ9');
    expect(buildInjection(full).key).toBe(b.key);
  });

  it('injects nothing at all with disable_all_injection', () => {
    const b = buildInjection({ ...full, superpowers: { ...full.superpowers, disable_all_injection: true } });
    expect(b.head + b.bodyStart + b.bodyEnd).toBe('');
  });

  it('drops superpowers (only) when the master switch is off', () => {
    const b = buildInjection({ ...full, superpowers: { ...full.superpowers, enabled: false } });
    expect(b.head).toBe('<link rel="stylesheet" href="/__service/collab.css">');
    expect(b.bodyStart).toBe('');
  });

  it('collab custom adds only the stylesheet', () => {
    const b = buildInjection({ collab: { ui: 'custom' } });
    expect(b.head).toBe('<link rel="stylesheet" href="/__service/collab.css">');
    expect(buildInjection({ collab: { ui: 'default' } }).head).toBe('');
    expect(buildInjection(null).head).toBe('');
  });

  it('refuses ids that could break out of the script', () => {
    for (const bad of ["G-1');alert(1);//", 'G-1</script><script>alert(1)', 'G 1', 'G-"1']) {
      const b = buildInjection({
        superpowers: {
          vendorAnalytics: { enabled: true, measurementId: bad },
          vendorTagManager: { enabled: true, containerId: bad },
        },
      });
      expect(b.head, bad).toBe('');
      expect(b.skipped).toEqual([
        'superpowers.vendorAnalytics.measurementId',
        'superpowers.vendorTagManager.containerId',
      ]);
    }
  });

  it('skips disabled vendors and appends the author inject entries', () => {
    const b = buildInjection({
      superpowers: { vendorAnalytics: { enabled: false, measurementId: 'G-1' } },
      inject: {
        head: ['<meta name=a>'],
        bodyStart: ['<div>s</div>'],
        noscript: ['n'],
        bodyEnd: ['<i>e</i>'],
      },
    });
    expect(b.head).toBe('<meta name=a>');
    expect(b.bodyStart).toBe('<div>s</div><noscript>n</noscript>');
    expect(b.bodyEnd).toBe('<i>e</i>');
  });
});
