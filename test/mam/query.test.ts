/**
 * Querying the archive (mod_mam, XEP-0313 with XEP-0059 paging) on each database: 1 000 messages written
 * through the archive's store are paged forward and backward without a gap or a repeat, with counts,
 * indexes and `complete` right; the page size is capped by max_page; each filter (with bare and full,
 * start, end, after-id, before-id, ids) and <flip-page/>; unknown ids are item-not-found and bad values
 * bad-request naming the field.
 */
import { expect } from 'chai';
import { x } from '@service/plugin-api';
import { ArchiveStore } from '../../modules/mod_mam/src/store.js';
import { testDatabases } from '../support/databases.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, stopAll, xmppConfig, type Client } from '../support/xmpp.js';
import { mamQuery, mamRefusal } from './helpers.js';

const BASE = Date.parse('2020-01-01T00:00:00Z');
const TOTAL = 1000;
/** Message i: every third with p2, the others with p1 on two resources. */
const peerOf = (i: number) => (i % 3 === 2 ? 'p2@localhost/x' : i % 3 === 0 ? 'p1@localhost/a' : 'p1@localhost/b');
const iso = (ms: number) => new Date(ms).toISOString();

for (const database of testDatabases()) {
  describe(`MAM queries on ${database.name} (mod_mam)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let reader: Client;
    /** The archive ids of message i. */
    const ids: string[] = [];
    const bodies = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `m${from + k}`);

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_mam: {} }), ...serverSqlConfig(settings) });
      await t.server.services.accounts.register('reader', 'localhost', 'reader-pw');
      const store = new ArchiveStore(t.server.services.storage.db());
      for (let i = 0; i < TOTAL; i++) {
        const peer = peerOf(i);
        const stanza = x('message', { xmlns: 'jabber:client', from: peer, to: 'reader@localhost/r', type: 'chat', id: `id${i}` }, x('body', {}, `m${i}`));
        ids.push(await store.add({ user: 'reader', host: 'localhost' }, { peer: peer.split('/')[0]!, peerFull: peer, direction: 'in', stanza, body: `m${i}`, createdAt: BASE + i * 1000 }));
      }
      reader = await login(t, { user: 'reader', password: 'reader-pw', resource: 'r' });
    });
    after(async () => {
      await stopAll(reader);
      await t?.stop();
      await database.cleanup();
    });

    it('pages forward over all 1 000 messages, 50 at a time, with index, count and complete', async () => {
      const seen: string[] = [];
      let after: string | undefined;
      for (let page = 0; ; page++) {
        const r = await mamQuery(reader, { max: 50, ...(after ? { after } : {}) });
        expect(r.bodies).to.deep.equal(bodies(page * 50, page * 50 + 50));
        expect(r.ids).to.deep.equal(ids.slice(page * 50, page * 50 + 50));
        expect(r.count).to.equal(TOTAL);
        expect(r.firstIndex).to.equal(page * 50);
        expect(r.first).to.equal(r.ids[0]);
        expect(r.last).to.equal(r.ids.at(-1));
        seen.push(...r.bodies);
        expect(r.complete, `page ${page}`).to.equal(page === 19);
        if (r.complete) break;
        after = r.last;
      }
      expect(seen).to.deep.equal(bodies(0, TOTAL));
    });

    it('pages backward from the last page (empty <before/>) to the first', async () => {
      const pages: string[][] = [];
      let before = '';
      for (let page = 0; ; page++) {
        const r = await mamQuery(reader, { max: 30, before });
        pages.unshift(r.bodies);
        expect(r.firstIndex).to.equal(Math.max(0, TOTAL - 30 * (page + 1)));
        if (r.complete) break;
        expect(r.bodies).to.have.length(30);
        before = r.first!;
      }
      expect(pages.flat()).to.deep.equal(bodies(0, TOTAL));
    });

    it('caps the page at max_page (50), also without <max/>', async () => {
      expect((await mamQuery(reader, { max: 500 })).results).to.have.length(50);
      const r = await mamQuery(reader, {});
      expect(r.bodies).to.deep.equal(bodies(0, 50));
      expect(r.complete).to.equal(false);
      const none = await mamQuery(reader, { max: 0 });
      expect(none.results).to.have.length(0);
      expect(none.count).to.equal(TOTAL);
    });

    it('filters on with: a bare JID matches every resource, a full JID that resource only', async () => {
      const p2 = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 3 === 2);
      const bare = await mamQuery(reader, { with: 'p2@localhost', max: 10 });
      expect(bare.count).to.equal(p2.length);
      expect(bare.bodies).to.deep.equal(p2.slice(0, 10).map((i) => `m${i}`));
      const full = await mamQuery(reader, { with: 'p1@localhost/a', max: 10 });
      expect(full.count).to.equal(Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % 3 === 0).length);
      expect(full.bodies).to.deep.equal(['m0', 'm3', 'm6', 'm9', 'm12', 'm15', 'm18', 'm21', 'm24', 'm27']);
      expect((await mamQuery(reader, { with: 'p1@localhost', max: 1 })).count).to.equal(TOTAL - p2.length);
      expect((await mamQuery(reader, { with: 'nobody@localhost' })).count).to.equal(0);
    });

    it('filters on start and end (inclusive), with other time zones', async () => {
      const r = await mamQuery(reader, { start: iso(BASE + 100_000), end: iso(BASE + 199_000), max: 50 });
      expect(r.count).to.equal(100);
      expect(r.bodies).to.deep.equal(bodies(100, 150));
      // 2020-01-01T01:00:05+01:00 is BASE + 5 s.
      const zoned = await mamQuery(reader, { start: '2020-01-01T01:00:05+01:00', max: 1 });
      expect(zoned.bodies).to.deep.equal(['m5']);
      expect((await mamQuery(reader, { end: iso(BASE + 2_500), max: 50 })).bodies).to.deep.equal(['m0', 'm1', 'm2']);
    });

    it('filters on after-id, before-id and ids (urn:xmpp:mam:2#extended)', async () => {
      expect((await mamQuery(reader, { afterId: ids[10], beforeId: ids[20] })).bodies).to.deep.equal(bodies(11, 20));
      const tail = await mamQuery(reader, { afterId: ids[995] });
      expect(tail.bodies).to.deep.equal(bodies(996, 1000));
      expect(tail.complete).to.equal(true);
      expect((await mamQuery(reader, { beforeId: ids[3] })).bodies).to.deep.equal(['m0', 'm1', 'm2']);
      const picked = await mamQuery(reader, { ids: [ids[999]!, ids[5]!, ids[500]!] });
      expect(picked.bodies).to.deep.equal(['m5', 'm500', 'm999']);
      expect(picked.count).to.equal(3);
    });

    it('flips the page: newest first, the same page as without flip', async () => {
      const plain = await mamQuery(reader, { max: 5, before: '' });
      const flipped = await mamQuery(reader, { max: 5, before: '', flip: true });
      expect(plain.bodies).to.deep.equal(bodies(995, 1000));
      expect(flipped.bodies).to.deep.equal([...bodies(995, 1000)].reverse());
      expect(flipped.count).to.equal(TOTAL);
    });

    it('answers item-not-found for ids the archive does not hold', async () => {
      for (const o of [{ after: 'nope' }, { before: 'nope' }, { afterId: 'nope' }, { beforeId: 'nope' }]) {
        expect((await mamRefusal(reader, o)).condition, JSON.stringify(o)).to.equal('item-not-found');
      }
    });

    it('answers bad-request naming the field for values that do not read', async () => {
      const cases: Array<[object, string]> = [
        [{ start: 'yesterday' }, 'start'],
        [{ end: '2020-13-45' }, 'end'],
        [{ with: 'a@b@c' }, 'with'],
        [{ max: 'ten' }, 'max'],
        [{ fields: [['colour', 'red']] }, 'colour'],
      ];
      for (const [o, field] of cases) {
        const refusal = await mamRefusal(reader, o);
        expect(refusal.condition, field).to.equal('bad-request');
        expect(refusal.text, field).to.contain(field);
      }
    });
  });
}
