/**
 * The XMPP framing layer: stanzas out of a byte stream, and the right error for each kind of bad input.
 */
import { expect } from 'chai';
import { StreamParser, parseElement, ParseError, type ParseErrorCondition } from '@service/plugin-api';
import type { XmlElement } from '@service/plugin-api';

const HEADER = "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' to='localhost' version='1.0'>";

function feed(chunks: Array<string | Buffer>, limits = { maxStanzaSize: 1024, maxDepth: 16 }) {
  const out = { start: undefined as undefined | { name: string; attrs: Record<string, string>; ns?: string }, elements: [] as XmlElement[], ended: false, error: undefined as undefined | { condition: ParseErrorCondition; text: string } };
  const parser = new StreamParser(
    {
      streamStart: (name, attrs, ns) => (out.start = { name, attrs, ns }),
      element: (el) => out.elements.push(el),
      streamEnd: () => (out.ended = true),
      error: (condition, text) => (out.error ??= { condition, text }),
    },
    limits,
  );
  for (const chunk of chunks) parser.write(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return out;
}

describe('stream parser', () => {
  it('reads the header, stanzas split across chunks, and the end', () => {
    const out = feed([HEADER, "<message to='a@localhost' type='chat'><bo", 'dy>h&amp;i &#x263A;</body></message>  \n', '<presence/></stream:stream>']);
    expect(out.start).to.deep.include({ name: 'stream:stream', ns: 'http://etherx.jabber.org/streams' });
    expect(out.start!.attrs).to.include({ to: 'localhost', version: '1.0', xmlns: 'jabber:client' });
    expect(out.elements.map((e) => e.name)).to.deep.equal(['message', 'presence']);
    expect(out.elements[0]!.ns).to.equal('jabber:client');
    expect(out.elements[0]!.getChildText('body')).to.equal('h&i ☺');
    expect(out.elements[1]!.toString()).to.equal('<presence/>');
    expect(out.ended).to.equal(true);
    expect(out.error).to.equal(undefined);
  });

  it('counts a stanza from its first byte: a huge start tag, split over chunks, is refused before it ends', () => {
    const out = feed([HEADER, "<message to='a@localhost' x='", 'y'.repeat(600), 'y'.repeat(600)]);
    expect(out.error?.condition).to.equal('policy-violation');
    expect(out.elements).to.have.length(0);
  });

  it('fails at once on what may not stand between stanzas, without waiting for its end', () => {
    expect(feed([HEADER, 'hello']).error?.condition).to.equal('not-well-formed');
    expect(feed([HEADER, '<!', '-- never closed']).error?.condition).to.equal('restricted-xml');
    expect(feed([HEADER, ' <?pi never closed']).error?.condition).to.equal('restricted-xml');
    expect(feed([HEADER, '<![CDATA[ never closed']).error?.condition).to.equal('not-well-formed');
    expect(feed([HEADER, 'x'.repeat(2000)]).error?.condition).to.equal('not-well-formed');
  });

  it('stops at the first element nested too deep, not after parsing the rest of a megabyte of nesting', () => {
    const deep = '<a>'.repeat(140_000) + '</a>'.repeat(140_000);
    const started = performance.now();
    const out = feed([HEADER, `<message>${deep}</message><presence/>`], { maxStanzaSize: 2_000_000, maxDepth: 64 });
    const elapsed = performance.now() - started;
    expect(out.error).to.deep.equal({ condition: 'policy-violation', text: 'elements nested deeper than 64 levels' });
    expect(out.elements).to.deep.equal([], 'nothing after the failure is parsed');
    // Finishing the document took minutes (saxes' namespace scopes grow with depth); stopping takes milliseconds.
    expect(elapsed).to.be.below(2000);
    expect(() => parseElement(deep, { maxStanzaSize: 2_000_000, maxDepth: 64 })).to.throw(ParseError, /nested deeper than 64 levels/);
  });

  it('does not count whitespace keepalives towards the next stanza', () => {
    const pings = Array.from({ length: 3000 }, () => ' ');
    const out = feed([HEADER, ...pings, '<presence/>', ...pings, `<message><body>${'z'.repeat(900)}</body></message>`]);
    expect(out.error).to.equal(undefined);
    expect(out.elements.map((e) => e.name)).to.deep.equal(['presence', 'message']);
  });

  it('reads stanzas whose start tags are split at every point after a stanza ended (the parser lets go of the last one between stanzas)', () => {
    const first = "<message to='a@localhost' xmlns:x='urn:x' x:a='1'><body>1</body></message>";
    const second = "<message to='b@localhost' xmlns:y='urn:y' y:b='2' id='m2'><y:c/><body>2</body></message>";
    for (let cut = 0; cut <= second.length; cut++) {
      const out = feed([HEADER, first + second.slice(0, cut), second.slice(cut), ' <presence/>']);
      expect(out.error, `cut at ${cut}`).to.equal(undefined);
      expect(out.elements.map((e) => e.toString()), `cut at ${cut}`).to.deep.equal([first, second, '<presence/>']);
    }
  });

  it('keeps namespaces of payloads and serializes safely', () => {
    const out = feed([HEADER, "<iq type='get' id='1'><query xmlns='jabber:iq:roster' ver='a&lt;b'/></iq>"]);
    const query = out.elements[0]!.getChild('query', 'jabber:iq:roster');
    expect(query?.attr('ver')).to.equal('a<b');
    expect(out.elements[0]!.toString()).to.equal("<iq type='get' id='1'><query xmlns='jabber:iq:roster' ver='a&lt;b'/></iq>");
  });

  it('decodes a character split across chunks', () => {
    const bytes = Buffer.from(`${HEADER}<message><body>é</body></message>`);
    const cut = bytes.indexOf(Buffer.from('é')) + 1;
    const out = feed([bytes.subarray(0, cut), bytes.subarray(cut)]);
    expect(out.elements[0]!.getChildText('body')).to.equal('é');
  });

  const refusals: Array<[string, Array<string | Buffer>, ParseErrorCondition]> = [
    ['a DTD (billion laughs)', ['<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><stream:stream>'], 'restricted-xml'],
    ['a comment', [HEADER, '<!-- hi --><presence/>'], 'restricted-xml'],
    ['a processing instruction', [HEADER, '<?foo bar?>'], 'restricted-xml'],
    ['an undefined entity', [HEADER, '<message><body>&lol;</body></message>'], 'restricted-xml'],
    ['a bare ampersand', [HEADER, '<message><body>a & b</body></message>'], 'not-well-formed'],
    ['invalid UTF-8', [HEADER, Buffer.from([0x3c, 0x61, 0xff, 0xfe, 0x2f, 0x3e])], 'not-well-formed'],
    ['mismatched tags', [HEADER, '<message></presence>'], 'not-well-formed'],
    ['text between stanzas', [HEADER, 'hello<presence/>'], 'not-well-formed'],
    ['a control character', [HEADER, '<message>\u0001</message>'], 'not-well-formed'],
    ['a stanza over the size limit', [HEADER, `<message><body>${'x'.repeat(2000)}</body></message>`], 'policy-violation'],
    ['a stanza over the limit, a byte at a time', [HEADER, ...`<message><body>${'x'.repeat(1100)}`.split('')], 'policy-violation'],
    ['nesting over the depth limit', [HEADER, '<a>'.repeat(40)], 'policy-violation'],
  ];
  for (const [what, chunks, condition] of refusals) {
    it(`refuses ${what} with ${condition}`, () => {
      const out = feed(chunks);
      expect(out.error?.condition, out.error?.text).to.equal(condition);
    });
  }

  it('counts the limit per stanza, not per stream', () => {
    const stanza = `<message><body>${'y'.repeat(600)}</body></message>`;
    const out = feed([HEADER, stanza, stanza, stanza]);
    expect(out.error).to.equal(undefined);
    expect(out.elements).to.have.length(3);
  });

  it('accepts ampersands inside CDATA, also with the markers split across chunks', () => {
    const out = feed([HEADER, '<message><body><![CDA', 'TA[a & b ]', ']> &lt;&#38;</body></message>']);
    expect(out.error).to.equal(undefined);
    expect(out.elements[0]!.getChildText('body')).to.equal('a & b  <&');
  });

  it('ignores whitespace keepalives', () => {
    const out = feed([HEADER, ' ', '\n', '<presence/>', ' ']);
    expect(out.error).to.equal(undefined);
    expect(out.elements).to.have.length(1);
  });

  describe('parseElement', () => {
    it('parses one element', () => {
      const el = parseElement("<message to='a@b' xmlns='jabber:client'><body>hi</body></message>");
      expect(el.name).to.equal('message');
      expect(el.ns).to.equal('jabber:client');
    });

    it('refuses several elements, text and bad XML with a reason', () => {
      expect(() => parseElement('<a/><b/>')).to.throw(ParseError, /one element/);
      expect(() => parseElement('hello')).to.throw(ParseError);
      expect(() => parseElement('<a>')).to.throw(ParseError, /^the text ends before <a> is closed$/);
      expect(() => parseElement('<a><b>x</b>')).to.throw(ParseError, /^the text ends before <a> is closed$/);
      expect(() => parseElement('hello')).to.throw(ParseError, /^text is not allowed outside the element$/);
      try {
        parseElement('<a><!-- x --></a>');
      } catch (err) {
        expect((err as ParseError).condition).to.equal('restricted-xml');
      }
    });
  });
});
