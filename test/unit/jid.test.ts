import { expect } from 'chai';
import { InvalidJid, bareJid, formatJid, nameprep, nodeprep, parseJid, resourceprep } from '../../kernel/src/accounts/jid.js';

function invalid(fn: () => unknown): InvalidJid {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(InvalidJid);
    return err as InvalidJid;
  }
  expect.fail('expected InvalidJid');
}

describe('jid', () => {
  describe('nodeprep', () => {
    it('lower-cases and applies compatibility normalization', () => {
      expect(nodeprep('Alice')).to.equal('alice');
      expect(nodeprep('ÉMILE')).to.equal('émile');
      // Fullwidth letters and the ﬁ ligature fold to their plain forms.
      expect(nodeprep('ＡＢＣ')).to.equal('abc');
      expect(nodeprep('ﬁn')).to.equal('fin');
      // Decomposed e + combining acute composes.
      expect(nodeprep('rene\u0301')).to.equal('ren\u00e9');
    });

    it('is idempotent', () => {
      for (const name of ['Alice', 'ÉMILE', 'Straße', 'İstanbul', 'ﬁn', '中文']) {
        const once = nodeprep(name);
        expect(nodeprep(once)).to.equal(once);
      }
    });

    it('accepts letters of any script, digits and punctuation that JIDs allow', () => {
      expect(nodeprep('user.name-1_x+tag')).to.equal('user.name-1_x+tag');
      expect(nodeprep('中文')).to.equal('中文');
      expect(nodeprep('😀')).to.equal('😀');
    });

    it('names each forbidden character', () => {
      for (const char of ['"', '&', "'", '/', ':', '<', '>', '@']) {
        const err = invalid(() => nodeprep(`a${char}b`));
        expect(err.message).to.equal(`user name contains '${char}', which is not allowed`);
        expect(err.part).to.equal('user');
      }
    });

    it('rejects empty, whitespace, controls, private use, unassigned and invisible characters', () => {
      expect(invalid(() => nodeprep('')).message).to.equal('user name is empty');
      expect(invalid(() => nodeprep('a b')).message).to.match(/whitespace \(U\+0020\)/);
      expect(invalid(() => nodeprep('a\u00a0b')).message).to.match(/whitespace/);
      expect(invalid(() => nodeprep('a\tb')).message).to.match(/whitespace/);
      expect(invalid(() => nodeprep('a\u0001b')).message).to.match(/control character \(U\+0001\)/);
      expect(invalid(() => nodeprep('a\ue000b')).message).to.match(/private-use character \(U\+E000\)/);
      expect(invalid(() => nodeprep('a\u0378b')).message).to.match(/unassigned code point \(U\+0378\)/);
      expect(invalid(() => nodeprep('a\u202eb')).message).to.match(/invisible formatting character \(U\+202E\)/);
      expect(invalid(() => nodeprep('a\ud800b')).message).to.match(/unpaired surrogate/);
    });

    it('limits the length to 191 characters, counted in code points', () => {
      expect(nodeprep('a'.repeat(191))).to.have.length(191);
      expect(invalid(() => nodeprep('a'.repeat(192))).message).to.equal('user name is 192 characters long, the limit is 191');
      // 191 astral characters are 382 UTF-16 units but still fit.
      expect([...nodeprep('😀'.repeat(191))]).to.have.length(191);
    });
  });

  describe('nameprep', () => {
    it('lower-cases, normalizes and drops a trailing dot', () => {
      expect(nameprep('Example.ORG.')).to.equal('example.org');
      expect(nameprep('MÜNCHEN.de')).to.equal('münchen.de');
      expect(nameprep('localhost')).to.equal('localhost');
    });

    it('accepts IPv4 and bracketed IPv6 literals', () => {
      expect(nameprep('127.0.0.1')).to.equal('127.0.0.1');
      expect(nameprep('[::1]')).to.equal('[::1]');
      expect(nameprep('[2001:DB8::1]')).to.equal('[2001:db8::1]');
      expect(invalid(() => nameprep('[not-ip]')).message).to.match(/not a valid IPv6 literal/);
    });

    it('rejects empty labels and characters outside letters, digits and hyphen', () => {
      expect(invalid(() => nameprep('')).message).to.equal('domain is empty');
      expect(invalid(() => nameprep('.')).message).to.equal('domain is empty');
      expect(invalid(() => nameprep('a..b')).message).to.match(/empty label/);
      expect(invalid(() => nameprep('.a')).message).to.match(/empty label/);
      expect(invalid(() => nameprep('a_b.org')).message).to.match(/contains '_'/);
      expect(invalid(() => nameprep('a b.org')).message).to.match(/U\+0020/);
      expect(invalid(() => nameprep('user@host')).message).to.match(/contains '@'/);
      expect(invalid(() => nameprep('a:5222')).part).to.equal('host');
    });

    it('limits labels to 63 and the domain to 253 characters of its ASCII form', () => {
      expect(nameprep(`${'a'.repeat(63)}.org`)).to.have.length(67);
      expect(invalid(() => nameprep(`${'a'.repeat(64)}.org`)).message).to.match(/label longer than 63/);
      const label = 'a'.repeat(63);
      const longest = [label, label, label, 'a'.repeat(61)].join('.');
      expect(longest).to.have.length(253);
      expect(nameprep(longest)).to.equal(longest);
      expect(invalid(() => nameprep(`${longest}a`)).message).to.match(/longer than 253/);
      // 60 'ü' are 60 characters but far more than 63 in punycode.
      expect(invalid(() => nameprep(`${'ü'.repeat(60)}.de`)).message).to.match(/label longer than 63/);
    });
  });

  describe('resourceprep', () => {
    it('keeps case and spaces, composes to NFC', () => {
      expect(resourceprep('My Phone')).to.equal('My Phone');
      expect(resourceprep('e\u0301')).to.equal('\u00e9');
      expect(resourceprep('a/b@c')).to.equal('a/b@c');
    });

    it('rejects empty, controls, and more than 1023 bytes of UTF-8', () => {
      expect(invalid(() => resourceprep('')).message).to.equal('resource is empty');
      expect(invalid(() => resourceprep('a\nb')).message).to.match(/U\+000A/);
      expect(resourceprep('a'.repeat(1023))).to.have.length(1023);
      expect(invalid(() => resourceprep('a'.repeat(1024))).message).to.equal('resource is 1024 bytes long, the limit is 1023');
      // 512 two-byte characters: 1024 bytes.
      expect(invalid(() => resourceprep('é'.repeat(512))).part).to.equal('resource');
    });
  });

  describe('parseJid / formatJid / bareJid', () => {
    it('splits and normalizes every part', () => {
      expect(parseJid('Alice@Example.ORG/Phone')).to.deep.equal({ user: 'alice', host: 'example.org', resource: 'Phone' });
      expect(parseJid('example.org')).to.deep.equal({ host: 'example.org' });
      expect(parseJid('example.org/res')).to.deep.equal({ host: 'example.org', resource: 'res' });
    });

    it('starts the resource at the first slash, which may contain @ and /', () => {
      expect(parseJid('a@b/c@d/e')).to.deep.equal({ user: 'a', host: 'b', resource: 'c@d/e' });
    });

    it('rejects empty parts and a second @ in the bare part', () => {
      expect(invalid(() => parseJid('@example.org')).part).to.equal('user');
      expect(invalid(() => parseJid('a@example.org/')).part).to.equal('resource');
      expect(invalid(() => parseJid('a@')).part).to.equal('host');
      expect(invalid(() => parseJid('a@b@c')).part).to.equal('host');
    });

    it('formats back and strips the resource', () => {
      expect(formatJid({ user: 'a', host: 'b', resource: 'c' })).to.equal('a@b/c');
      expect(formatJid({ host: 'b' })).to.equal('b');
      expect(bareJid({ user: 'a', host: 'b', resource: 'c' })).to.equal('a@b');
      expect(bareJid('Alice@Example.org/Phone')).to.equal('alice@example.org');
      expect(bareJid('example.org/x')).to.equal('example.org');
    });
  });
});
