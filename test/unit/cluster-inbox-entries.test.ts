/**
 * What one node hands another through its Redis inbox, as the one string a stream entry carries: every kind
 * reads back as written, free text with line breaks included, and what is not an entry of this version
 * (another field, a kind it does not know, a part missing) is no entry at all.
 */
import { expect } from 'chai';
import { encodeEntry, entryOf, type InboxEntry } from '../../modules/mod_cluster/src/inbox.js';

describe('cluster inbox entries', () => {
  it('read back as written, for every kind', () => {
    const entries: InboxEntry[] = [
      { kind: 'deliver', to: 'a@b/c', xml: "<message xmlns='jabber:client'><body>two\nlines</body></message>" },
      { kind: 'send', to: 'a@b/c', xml: '<presence/>' },
      { kind: 'close', to: 'a@b/c', condition: 'conflict', text: 'Replaced\nby another' },
      { kind: 'close', to: 'a@b/c', condition: 'reset', text: '' },
      { kind: 'leave', to: 'service@node2' },
      { kind: 'take', to: 'a@b/c', id: 'x-Y_1', from: 'service@node3', ref: '5f0c' },
      { kind: 'taken', to: 'service@node3', ref: '5f0c', session: '{"id":"x"}' },
      { kind: 'taken', to: 'service@node3', ref: '5f0c', session: '' },
    ];
    for (const entry of entries) expect(entryOf(['e', encodeEntry(entry)])).to.deep.equal(entry);
  });

  it('is no entry when it is not one of this version', () => {
    for (const fields of [['kind', 'deliver'], ['e', 'deliver\na@b/c'], ['e', 'teleport\na@b/c\nx'], ['e', 'take\na@b/c\nid'], ['e', ''], []]) {
      expect(entryOf(fields), JSON.stringify(fields)).to.equal(undefined);
    }
  });
});
