/**
 * Stanzas handed between workers as JSON trees (kernel/plugin-api/src/xml/element-tree.ts): what one worker sends
 * reads back on the other with the same names, resolved namespaces, attributes and text, through JSON as the
 * socket carries it; what is not a tree is refused.
 */
import { expect } from 'chai';
import { parseElement, serialize } from '@service/plugin-api';
import { elementOf, treeOf, type ElementTree } from '@service/plugin-api';

describe('element trees between workers', () => {
  it('reads back a stanza with nested namespaces, escaped text and xml:lang through JSON', () => {
    const stanza = parseElement(
      `<message xmlns='jabber:client' to='a@b/r' from='c@d/e' type='chat' xml:lang='fr'><body>"1 &lt; 2" &amp; ünïcode 🙂</body><x xmlns='urn:x'><y a='&apos;q&apos;'/>tail</x><thread>t1</thread></message>`,
    );
    const back = elementOf(JSON.parse(JSON.stringify(treeOf(stanza))) as ElementTree);
    expect(serialize(back)).to.equal(serialize(stanza));
    expect(back.ns).to.equal('jabber:client');
    expect(back.getChild('x', 'urn:x')?.getChild('y')?.ns).to.equal('urn:x');
    expect(back.getChildText('body')).to.equal('"1 < 2" & ünïcode 🙂');
    expect(back.attrs['xml:lang']).to.equal('fr');
  });

  it('refuses what is not a tree', () => {
    for (const bad of [[], [1, {}, []], ['a', null, []], ['a', {}, 'text'], ['a', {}, [[2, {}, []]]]]) {
      expect(() => elementOf(bad as unknown as ElementTree), JSON.stringify(bad)).to.throw('not an element tree');
    }
  });
});
