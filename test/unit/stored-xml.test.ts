/**
 * Elements as stored text (toStoredXml / fromStoredXml): what is stored reads back to the same names,
 * namespaces, attributes and text, one element after another through the long-lived reader, and bad or
 * unusual text (a declaration, two elements, an unfinished one, a comment) is refused or read exactly as
 * parseElement would, without spoiling what is read after it.
 */
import { expect } from 'chai';
import { ParseError, fromStoredXml, parseElement, toStoredXml, x, type XmlElement } from '@service/plugin-api';

describe('stored XML', () => {
  it('reads back what it stored, many times in a row, with namespaces inherited from ancestors declared', () => {
    const message = parseElement(`<message xmlns='jabber:client' to='a@b' type='chat'><body>hi &amp; bye</body><x xmlns='urn:x'><y/></x></message>`);
    const body = message.getChild('body')!;
    for (let i = 0; i < 1000; i++) {
      const back = fromStoredXml(toStoredXml(message));
      expect(back.toString()).to.equal(message.toString());
      expect(back.getChild('x', 'urn:x')!.getChild('y')!.ns).to.equal('urn:x');
    }
    const alone = fromStoredXml(toStoredXml(body));
    expect(alone.ns).to.equal('jabber:client');
    expect(alone.text()).to.equal('hi & bye');
  });

  it('declares a prefix an ancestor declared, where an element taken out of its tree uses it', () => {
    const message = parseElement(`<message xmlns='jabber:client' xmlns:foo='urn:foo'><foo:bar a='1'><foo:baz/><plain/></foo:bar></message>`);
    const bar = message.children.find((c): c is XmlElement => typeof c !== 'string')!;
    const stored = toStoredXml(bar);
    expect(stored).to.equal(`<foo:bar a='1' xmlns:foo='urn:foo'><foo:baz/><plain xmlns='jabber:client'/></foo:bar>`);
    const back = fromStoredXml(stored);
    expect(back.ns).to.equal('urn:foo');
    expect((back.children[0] as any).ns).to.equal('urn:foo');
    expect((back.children[1] as any).ns).to.equal('jabber:client');
  });

  it('refuses bad text with parseElement\'s error, and reads the next element as if nothing happened', () => {
    for (const bad of ['<a><b></a>', '<a/><b/>', '<a>', 'text', '<a><!-- c --></a>']) {
      expect(() => fromStoredXml(bad), bad).to.throw(ParseError);
      expect(fromStoredXml(`<ok n='${bad.length}'/>`).attr('n')).to.equal(String(bad.length));
    }
  });

  it('accepts an XML declaration before the element', () => {
    expect(fromStoredXml(`<?xml version='1.0'?><iq type='get' id='1'/>`).attr('id')).to.equal('1');
    expect(fromStoredXml(toStoredXml(x('presence', { type: 'probe' }))).attr('type')).to.equal('probe');
  });
});
