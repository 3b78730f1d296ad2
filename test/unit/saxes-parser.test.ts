/**
 * FastSaxesParser (kernel/plugin-api/src/xml/saxes-parser.ts): with every handler set, the parser object stays
 * in V8's fast-properties mode, where saxes' own parser falls into dictionary mode (and parses 4–5× slower).
 * Checked with V8's %HasFastProperties, enabled for this file's functions only.
 */
import { expect } from 'chai';
import { setFlagsFromString } from 'node:v8';
import { SaxesParser } from 'saxes';
import { FastSaxesParser } from '../../kernel/plugin-api/src/xml/saxes-parser.js';

setFlagsFromString('--allow-natives-syntax');
// Compiled after the flag: the only place the natives syntax is used.
const hasFastProperties = new Function('object', 'return %HasFastProperties(object)') as (object: object) => boolean;

const EVENTS = ['xmldecl', 'text', 'processinginstruction', 'doctype', 'comment', 'opentagstart', 'attribute', 'opentag', 'closetag', 'cdata', 'error', 'end', 'ready'] as const;

function withEveryHandler(parser: SaxesParser<{ xmlns: true; position: true }>, seen: string[]): void {
  for (const event of EVENTS) (parser.on as (name: string, handler: (...args: unknown[]) => void) => void)(event, () => seen.push(event));
}

describe('FastSaxesParser', () => {
  it('keeps fast properties with every handler set, where saxes’ own parser loses them', () => {
    const plain = new SaxesParser({ xmlns: true, position: true });
    withEveryHandler(plain, []);
    // The problem this class exists for: if saxes or V8 stop doing this, the class can go.
    expect(hasFastProperties(plain)).to.equal(false);

    const fast = new FastSaxesParser({ xmlns: true, position: true });
    withEveryHandler(fast, []);
    expect(hasFastProperties(fast)).to.equal(true);
    fast.write("<stream xmlns='jabber:client'><message to='a@b'><body>hi &amp; bye</body></message>");
    expect(hasFastProperties(fast)).to.equal(true);
  });

  it('reports the same events as saxes’ own parser', () => {
    const input = "<?xml version='1.0'?><root xmlns='urn:x'><!-- c --><a b='1'>t<![CDATA[d]]></a><?pi x?></root>";
    const plainEvents: string[] = [];
    const fastEvents: string[] = [];
    const plain = new SaxesParser({ xmlns: true, position: true });
    const fast = new FastSaxesParser({ xmlns: true, position: true });
    withEveryHandler(plain, plainEvents);
    withEveryHandler(fast, fastEvents);
    plain.write(input).close();
    fast.write(input).close();
    expect(fastEvents).to.deep.equal(plainEvents);
    expect(fastEvents).to.include.members(['xmldecl', 'comment', 'opentag', 'cdata', 'processinginstruction', 'closetag', 'end']);
  });
});
