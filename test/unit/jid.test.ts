import { expect } from 'chai';
import { InvalidJid, bareJid, formatJid, nameprep, nodeprep, parseJid, resourceprep } from '@service/plugin-api';

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

    it('refuses a sample of every stringprep prohibition table (RFC 3454 C.1-C.9), naming the problem', () => {
      const samples: [string, string][] = [
        // C.1.1, C.1.2 (NFKC turns most non-ASCII spaces into U+0020 first; U+1680 and U+200B stay).
        ['a b', 'whitespace (U+0020)'],
        ['a\u3000b', 'whitespace (U+0020)'],
        ['a\u1680b', 'whitespace (U+1680)'],
        ['a\u200bb', 'an invisible formatting character (U+200B)'],
        // C.2.1, C.2.2
        ['a\u007fb', 'a control character (U+007F)'],
        ['a\u0080b', 'a control character (U+0080)'],
        ['a\u2028b', 'whitespace (U+2028)'],
        ['a\u06ddb', 'an invisible formatting character (U+06DD)'],
        ['a\u180eb', 'an invisible formatting character (U+180E)'],
        ['a\u2060b', 'an invisible formatting character (U+2060)'],
        ['a\ufeffb', 'an invisible formatting character (U+FEFF)'],
        ['a\u{1d173}b', 'an invisible formatting character (U+1D173)'],
        // C.3
        ['a\ue000b', 'a private-use character (U+E000)'],
        ['a\u{f0000}b', 'a private-use character (U+F0000)'],
        ['a\u{10fffd}b', 'a private-use character (U+10FFFD)'],
        // C.4
        ['a\ufdd0b', 'a noncharacter (U+FDD0)'],
        ['a\uffffb', 'a noncharacter (U+FFFF)'],
        ['a\u{1fffe}b', 'a noncharacter (U+1FFFE)'],
        // C.5
        ['a\udc00b', 'an unpaired surrogate (U+DC00)'],
        // C.6, the whole range U+FFF9-U+FFFD
        ['rep\ufffd', 'a character inappropriate for plain text (U+FFFD)'],
        ['a\ufff9b', 'a character inappropriate for plain text (U+FFF9)'],
        ['a\ufffbb', 'a character inappropriate for plain text (U+FFFB)'],
        ['a\ufffcb', 'a character inappropriate for plain text (U+FFFC)'],
        // C.7
        ['a\u2ff0b', 'an ideographic description character (U+2FF0)'],
        ['a\u2ffbb', 'an ideographic description character (U+2FFB)'],
        // C.8
        ['a\u200eb', 'an invisible formatting character (U+200E)'],
        ['a\u200fb', 'an invisible formatting character (U+200F)'],
        ['a\u202ab', 'an invisible formatting character (U+202A)'],
        ['a\u206ab', 'an invisible formatting character (U+206A)'],
        ['a\u2066b', 'an invisible formatting character (U+2066)'],
        // C.9
        ['a\u{e0001}b', 'an invisible formatting character (U+E0001)'],
        ['a\u{e0041}b', 'an invisible formatting character (U+E0041)'],
      ];
      for (const [name, problem] of samples) {
        const err = invalid(() => nodeprep(name));
        expect(err.message, JSON.stringify(name)).to.equal(`user name contains ${problem}, which is not allowed`);
        expect(err.part).to.equal('user');
      }
      // U+0340 and U+0341 (C.8) are gone after normalization, as in stringprep, which prohibits after normalizing.
      expect(nodeprep('a\u0340')).to.equal('\u00e0');
      // The zero-width joiners stay allowed.
      expect(nodeprep('a\u200db')).to.equal('a\u200db');
    });

    it('applies the bidi rule (RFC 3454 §6) and accepts right-to-left names', () => {
      for (const name of ['\u05d0\u05d1', '\u05e9\u05dc\u05d5\u05dd', '\u0645\u0631\u062d\u0628\u0627', '\u05d01\u05d1', '\u05d0.\u05d1_\u05d2', '\u05e9\u05c1\u05dc\u05d5\u05b9\u05dd', '\u0710\u0712', '\u07ca\u07cb']) {
        expect(nodeprep(name), JSON.stringify(name)).to.equal(name);
      }
      // Neutral characters do not count as left-to-right: digits, punctuation, emoji.
      expect(nodeprep('\u05d0-2-\u05d1')).to.equal('\u05d0-2-\u05d1');
      const refused: [string, string][] = [
        ['mixed\u05d0a', "user name mixes right-to-left and left-to-right characters ('\u05d0' and 'm'), which is not allowed"],
        ['\u05d0a\u05d1', "user name mixes right-to-left and left-to-right characters ('\u05d0' and 'a'), which is not allowed"],
        ['\u0627\u4e2d\u0628', "user name mixes right-to-left and left-to-right characters ('\u0627' and '\u4e2d'), which is not allowed"],
        ['1\u05d0', "user name has right-to-left characters, so it must start with one, not with '1'"],
        ['.\u05d0', "user name has right-to-left characters, so it must start with one, not with '.'"],
        ['\u05d01', "user name has right-to-left characters, so it must end with one, not with '1'"],
        ['\u05d0\u05d1\u{1f600}', "user name has right-to-left characters, so it must end with one, not with '\u{1f600}'"],
        // A trailing combining mark is not RandALCat either (RFC 5893 later relaxed this; stringprep did not).
        ['\u05d0\u05b8', 'user name has right-to-left characters, so it must end with one, not with U+05B8'],
      ];
      for (const [name, message] of refused) {
        const err = invalid(() => nodeprep(name));
        expect(err.message, JSON.stringify(name)).to.equal(message);
        expect(err.part).to.equal('user');
      }
      // Fullwidth Latin is folded to ASCII by NFKC first, and still mixes.
      expect(invalid(() => nodeprep('\u05d0\uff21\u05d1')).message).to.match(/mixes right-to-left and left-to-right characters \('\u05d0' and 'a'\)/);
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

    it('names the stringprep problem of a character it refuses', () => {
      const samples: [string, string][] = [
        ['a\ufffd.org', 'a character inappropriate for plain text (U+FFFD)'],
        ['a\u2ff0.org', 'an ideographic description character (U+2FF0)'],
        ['a\u202e.org', 'an invisible formatting character (U+202E)'],
        ['a\u{e0001}.org', 'an invisible formatting character (U+E0001)'],
        ['a\ufdd0.org', 'a noncharacter (U+FDD0)'],
        ['a\ue000.org', 'a private-use character (U+E000)'],
        ['a\u0080.org', 'a control character (U+0080)'],
        ['a\u1680.org', 'whitespace (U+1680)'],
        ['a\u0378.org', 'an unassigned code point (U+0378)'],
      ];
      for (const [domain, problem] of samples) {
        const err = invalid(() => nameprep(domain));
        expect(err.message, JSON.stringify(domain)).to.equal(`domain '${domain}' contains ${problem}, which is not allowed`);
        expect(err.part).to.equal('host');
      }
    });

    it('applies the bidi rule to each label and accepts right-to-left labels', () => {
      expect(nameprep('\u05d0\u05d1.org')).to.equal('\u05d0\u05d1.org');
      expect(nameprep('\u0645\u062b\u0627\u0644.\u0625\u062e\u062a\u0628\u0627\u0631')).to.equal('\u0645\u062b\u0627\u0644.\u0625\u062e\u062a\u0628\u0627\u0631');
      expect(nameprep('\u05d01\u05d1.example')).to.equal('\u05d01\u05d1.example');
      // Left-to-right and right-to-left labels may sit side by side: the rule is per label.
      expect(nameprep('\u05d0\u05d1.example.org')).to.equal('\u05d0\u05d1.example.org');
      const refused: [string, string][] = [
        ['mixed\u05d0a.org', "domain 'mixed\u05d0a.org': the label 'mixed\u05d0a' mixes right-to-left and left-to-right characters ('\u05d0' and 'm'), which is not allowed"],
        ['1\u05d0.org', "domain '1\u05d0.org': the label '1\u05d0' has right-to-left characters, so it must start with one, not with '1'"],
        ['example.\u05d01', "domain 'example.\u05d01': the label '\u05d01' has right-to-left characters, so it must end with one, not with '1'"],
        ['\u05d0-.org', "domain '\u05d0-.org': the label '\u05d0-' has right-to-left characters, so it must end with one, not with '-'"],
      ];
      for (const [domain, message] of refused) {
        const err = invalid(() => nameprep(domain));
        expect(err.message, JSON.stringify(domain)).to.equal(message);
        expect(err.part).to.equal('host');
      }
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

    it('maps non-ASCII spaces to U+0020, as Resourceprep (NFKC) and PRECIS do', () => {
      expect(resourceprep('My\u00a0Phone')).to.equal('My Phone');
      expect(resourceprep('a\u2003b\u3000c\u1680d')).to.equal('a b c d');
    });

    it('refuses a sample of every stringprep prohibition table except C.1.1, naming the problem', () => {
      const samples: [string, string][] = [
        ['a\u200bb', 'an invisible formatting character (U+200B)'],
        ['a\tb', 'whitespace (U+0009)'],
        ['a\u0000b', 'a control character (U+0000)'],
        ['a\u009fb', 'a control character (U+009F)'],
        ['a\u2029b', 'whitespace (U+2029)'],
        ['a\u070fb', 'an invisible formatting character (U+070F)'],
        ['a\ufeffb', 'an invisible formatting character (U+FEFF)'],
        ['a\u00adb', 'an invisible formatting character (U+00AD)'],
        ['a\ue000b', 'a private-use character (U+E000)'],
        ['a\ufffeb', 'a noncharacter (U+FFFE)'],
        ['a\ud800b', 'an unpaired surrogate (U+D800)'],
        ['a\ufffdb', 'a character inappropriate for plain text (U+FFFD)'],
        ['a\ufffab', 'a character inappropriate for plain text (U+FFFA)'],
        ['a\u2ff5b', 'an ideographic description character (U+2FF5)'],
        ['a\u202db', 'an invisible formatting character (U+202D)'],
        ['a\u206fb', 'an invisible formatting character (U+206F)'],
        ['a\u{e007f}b', 'an invisible formatting character (U+E007F)'],
      ];
      for (const [resource, problem] of samples) {
        const err = invalid(() => resourceprep(resource));
        expect(err.message, JSON.stringify(resource)).to.equal(`resource contains ${problem}, which is not allowed`);
        expect(err.part).to.equal('resource');
      }
    });

    it('applies the bidi rule and accepts right-to-left resources', () => {
      expect(resourceprep('\u05d8\u05dc\u05e4\u05d5\u05df \u05e0\u05d9\u05d9\u05d3')).to.equal('\u05d8\u05dc\u05e4\u05d5\u05df \u05e0\u05d9\u05d9\u05d3');
      expect(resourceprep('\u0647\u0627\u062a\u0641 2 \u0628')).to.equal('\u0647\u0627\u062a\u0641 2 \u0628');
      const refused: [string, string][] = [
        ['Phone \u05d0', "resource mixes right-to-left and left-to-right characters ('\u05d0' and 'P'), which is not allowed"],
        [' \u05d0', "resource has right-to-left characters, so it must start with one, not with U+0020"],
        ['\u05d0 1', "resource has right-to-left characters, so it must end with one, not with '1'"],
      ];
      for (const [resource, message] of refused) {
        const err = invalid(() => resourceprep(resource));
        expect(err.message, JSON.stringify(resource)).to.equal(message);
        expect(err.part).to.equal('resource');
      }
      expect(invalid(() => parseJid('a@b/x\u05d0')).part).to.equal('resource');
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
