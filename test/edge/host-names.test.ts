import { describe, expect, it } from 'vitest';
import {
  ownHostMatcher,
  prefixTarget,
  siteHostname,
  siteLabelOf,
  splitSiteLabel,
} from '../../src/domain/hosts/names.ts';

/** Site host naming (src/domain/hosts/names.ts): the pure half of the one hosts resolver. */
describe('site host names', () => {
  it('takes the one label under the base domain, and nothing else', () => {
    expect(siteLabelOf('docs.localhost', 'localhost')).toBe('docs');
    expect(siteLabelOf('staging--docs.localhost', 'localhost')).toBe('staging--docs');
    expect(siteLabelOf('a.docs.localhost', 'localhost')).toBeNull();
    expect(siteLabelOf('.localhost', 'localhost')).toBeNull();
    expect(siteLabelOf('localhost', 'localhost')).toBeNull();
    expect(siteLabelOf('docslocalhost', 'localhost')).toBeNull();
    expect(siteLabelOf('docs.example.com', 'localhost')).toBeNull();
  });

  it('splits a label at its first `--` and builds hostnames back', () => {
    expect(splitSiteLabel('docs')).toEqual({ prefix: null, name: 'docs' });
    expect(splitSiteLabel('pr-1--docs')).toEqual({ prefix: 'pr-1', name: 'docs' });
    expect(splitSiteLabel('a--b--c')).toEqual({ prefix: 'a', name: 'b--c' });
    expect(siteHostname(null, 'docs', 'localhost')).toBe('docs.localhost');
    expect(siteHostname('pr-1', 'docs', 'localhost')).toBe('pr-1--docs.localhost');
  });

  it('reads a prefix as a version id (either spelling) or a channel', () => {
    const id = '0123456789abcdefghjkmnpqrs';
    expect(prefixTarget(null)).toEqual({ channel: 'live', versionId: null });
    expect(prefixTarget(`ver_${id}`)).toEqual({ channel: 'live', versionId: `ver_${id}` });
    expect(prefixTarget(`ver-${id}`)).toEqual({ channel: 'live', versionId: `ver_${id}` });
    expect(prefixTarget('ver-short')).toEqual({ channel: 'ver-short', versionId: null });
    expect(prefixTarget('staging')).toEqual({ channel: 'staging', versionId: null });
  });

  it('matches every hostname of a space and its custom domains, case- and trailing-dot-blind', () => {
    const own = ownHostMatcher('Localhost', 'docs', ['Docs.Example.com.']);
    expect(own('docs.localhost')).toBe(true);
    expect(own('DOCS.localhost.')).toBe(true);
    expect(own('pr-1--docs.localhost')).toBe(true);
    expect(own('docs.example.com')).toBe(true);
    expect(own('other.localhost')).toBe(false);
    expect(own('a.docs.localhost')).toBe(false);
    expect(own('docs.example.org')).toBe(false);
  });
});
