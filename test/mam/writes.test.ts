/**
 * The archive's group commit (mod_mam, the plugin API's BatchWriter) on each database, through the real server: a burst
 * of messages sent as fast as a client can write them is archived for both parties, whole and in the order
 * sent, with the stanza-ids the recipient saw; a stream-management acknowledgement (XEP-0198 <a h/>) comes
 * only once the messages it counts are in both archives; rows added in one turn share few statements, and
 * flush (the module's stop) writes everything queued; a row the database refuses fails alone, and a
 * message whose archiving fails is still delivered, without a stanza-id, and the failure is logged; past
 * COUNT_LIMIT rows a page leaves out the RSM count (and the index it would need), RSM max 0 still counts.
 * And the writer alone: statements spaced under load, a lone caller never held back.
 */
import { expect } from 'chai';
import { BatchWriter, x } from '@service/plugin-api';
import { ArchiveStore, COUNT_LIMIT } from '../../modules/mod_mam/src/store.js';
import { testDatabases } from '../support/databases.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { serverSqlConfig, TestServer } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig, type Client } from '../support/xmpp.js';
import { NS_RSM, NS_SID, mamQuery } from './helpers.js';

const BURST = 500;

describe('the archive batch writer (mod_mam)', () => {
  /** A writer over a fake statement that takes `ms`, recording each statement's start and size. */
  const recording = (ms: number) => {
    const statements: Array<{ at: number; rows: number }> = [];
    const writer = new BatchWriter<number>({
      maxRows: 250,
      minIntervalMs: 4,
      write: async (rows) => {
        statements.push({ at: performance.now(), rows: rows.length });
        await new Promise((r) => setTimeout(r, ms));
      },
    });
    return { writer, statements };
  };

  it('spaces statements under load, so that concurrent callers share them', async () => {
    const { writer, statements } = recording(0);
    // 20 callers, each adding 20 rows one after another (as 20 streams archiving their messages).
    await Promise.all(Array.from({ length: 20 }, async (_, c) => {
      for (let i = 0; i < 20; i++) await writer.add(c * 100 + i);
    }));
    expect(statements.reduce((n, s) => n + s.rows, 0)).to.equal(400);
    expect(statements.length, 'statements for 400 rows from 20 callers').to.be.at.most(40);
    for (let i = 1; i < statements.length; i++) {
      if (statements[i - 1]!.rows > 1) expect(statements[i]!.at - statements[i - 1]!.at, `the gap before statement ${i}`).to.be.at.least(3);
    }
  });

  it('does not hold a lone caller back: one row at a time goes at the next turn', async () => {
    const { writer, statements } = recording(0);
    const started = performance.now();
    for (let i = 0; i < 100; i++) await writer.add(i);
    // With the 4 ms spacing each row would wait it: 400 ms at least.
    expect(performance.now() - started).to.be.below(200);
    expect(statements.every((s) => s.rows === 1)).to.equal(true);
  });
});
const NS_SM = 'urn:xmpp:sm:3';

for (const database of testDatabases()) {
  describe(`MAM archive writes on ${database.name} (mod_mam group commit)`, function () {
    this.timeout(120_000);
    let t: TestServer;
    let alice: Client | undefined;
    let bob: Client | undefined;

    const rowsOf = async (user: string, direction: 'in' | 'out'): Promise<string[]> =>
      (await t.server.services.storage.db()('mam_messages').where({ host: 'localhost', username: user, direction }).orderBy([{ column: 'created_at' }, { column: 'id' }]).select('body')).map(
        (r: { body: string }) => r.body,
      );

    before(async () => {
      const settings = await database.settings('/tmp');
      t = await TestServer.start({ ...xmppConfig({ mod_mam: {}, mod_offline: {}, mod_stream_mgmt: {}, mod_admin_extra: {} }), ...serverSqlConfig(settings) });
      await t.bootstrapAdmin();
      for (const user of ['alice', 'bob', 'sender', 'away', 'carl', 'dora', 'erin']) await t.server.services.accounts.register(user, 'localhost', `${user}-pw`);
    });
    after(async () => {
      await stopAll(alice, bob);
      await t?.stop();
      await database.cleanup();
    });

    it(`archives a burst of ${BURST} messages for both parties, in the order sent, with the ids the recipient saw`, async () => {
      alice = await login(t, { user: 'alice', password: 'alice-pw', resource: 'a' });
      bob = await login(t, { user: 'bob', password: 'bob-pw', resource: 'b' });
      await bob.send(xml('presence'));
      const seen: Array<{ body: string; sid?: string }> = [];
      const all = new Promise<void>((resolve) =>
        bob!.on('stanza', (s) => {
          const body = s.is('message') ? s.getChildText('body') : null;
          if (body === null || !body.startsWith('burst ')) return;
          seen.push({ body, sid: s.getChildren('stanza-id', NS_SID).find((e: { attrs: Record<string, string> }) => e.attrs.by === 'bob@localhost')?.attrs.id });
          if (seen.length === BURST) resolve();
        }),
      );
      const bodies = Array.from({ length: BURST }, (_, i) => `burst ${i}`);
      // Without awaiting each one: the messages go out back to back, as a busy client's would.
      await Promise.all(bodies.map((body, i) => alice!.send(xml('message', { to: 'bob@localhost', type: 'chat', id: `b${i}` }, xml('body', {}, body)))));
      await all;
      expect(seen.map((s) => s.body), 'delivered in the order sent').to.deep.equal(bodies);
      expect(seen.every((s) => s.sid), 'every delivered copy has its stanza-id').to.equal(true);

      expect(await rowsOf('alice', 'out'), "the sender's archive").to.deep.equal(bodies);
      expect(await rowsOf('bob', 'in'), "the recipient's archive").to.deep.equal(bodies);
      // Through the query path: the recipient's archive ids are the stanza-ids it was given, in order.
      const ids: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await mamQuery(bob, { with: 'alice@localhost', ...(after ? { after } : {}) });
        ids.push(...page.ids);
        if (page.complete) break;
        after = page.last;
      }
      expect(ids).to.deep.equal(seen.map((s) => s.sid));
    });

    it('acknowledges a message (stream management) only once it is in both archives', async () => {
      const peer = await RawXmppPeer.connect(t.server.portOf('service_c2s')!);
      try {
        await peer.login('sender', 'sender-pw', { resource: 'sm' });
        peer.write(`<enable xmlns='${NS_SM}'/>`);
        await peer.waitFor(/<enabled\b/);
        for (let round = 1; round <= 5; round++) {
          peer.resetReceived();
          for (let i = 0; i < 40; i++) peer.write(`<message to='away@localhost' type='chat' id='sm-${round}-${i}'><body>sm ${round} ${i}</body></message>`);
          peer.write(`<r xmlns='${NS_SM}'/>`);
          const h = Number((await peer.waitFor(/<a\b[^>]*\bh=['"](\d+)['"]/, 20_000))[1]);
          // Read at once, before anything else can finish: what h counts must already be committed.
          const [out, inbox] = await Promise.all([rowsOf('sender', 'out'), rowsOf('away', 'in')]);
          expect(h, 'every message of the round handled (each is awaited before the next)').to.equal(round * 40);
          expect(out.length, `the sender's archive when h=${h}`).to.be.at.least(h);
          expect(inbox.length, `the recipient's archive when h=${h}`).to.be.at.least(h);
        }
      } finally {
        peer.destroy();
      }
    });

    it('writes the rows of one turn in few statements, and flush writes everything queued', async () => {
      const db = t.server.services.storage.db();
      const store = new ArchiveStore(db);
      let inserts = 0;
      const onQuery = (q: { sql: string }) => {
        if (/^insert into mam_messages/i.test(q.sql)) inserts++;
      };
      db.on('query', onQuery);
      try {
        const adds = Array.from({ length: 600 }, (_, i) =>
          store.add({ user: 'carl', host: 'localhost' }, { peer: 'dora@localhost', peerFull: 'dora@localhost/r', direction: 'in', stanza: x('message', { type: 'chat' }, x('body', {}, `f${i}`)), body: `f${i}` }),
        );
        await store.flush();
        expect((await rowsOf('carl', 'in')).length, 'every queued row is written once flush resolves').to.equal(600);
        // 600 rows, at most 250 a statement: three statements, whatever the database.
        expect(inserts, 'INSERT statements for 600 rows added in one turn').to.be.at.most(3);
        expect(new Set(await Promise.all(adds)).size, 'a distinct stanza id for each').to.equal(600);
      } finally {
        db.off('query', onQuery);
      }
    });

    it('fails only the row the database refuses when a batch fails', async () => {
      const store = new ArchiveStore(t.server.services.storage.db());
      const owner = { user: 'dora', host: 'localhost' };
      const row = (body: string, stanzaId?: string) => ({ peer: 'carl@localhost', peerFull: 'carl@localhost/r', direction: 'in' as const, stanza: x('message', {}, x('body', {}, body)), body, ...(stanzaId ? { stanzaId } : {}) });
      await store.add(owner, row('taken', 'dup-id'));
      // One turn: one statement, which the duplicate stanza id makes fail; then each row alone.
      const results = await Promise.allSettled([store.add(owner, row('one')), store.add(owner, row('again', 'dup-id')), store.add(owner, row('two'))]);
      expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
      expect(await rowsOf('dora', 'in')).to.deep.equal(['taken', 'one', 'two']);
    });

    it(`counts a page's result set only up to ${COUNT_LIMIT} rows, and always when asked for no rows`, async () => {
      const store = new ArchiveStore(t.server.services.storage.db());
      const owner = { user: 'erin', host: 'localhost' };
      const start = Date.now() - 10 * 60_000;
      const adds = Array.from({ length: COUNT_LIMIT + 1 }, (_, i) =>
        store.add(owner, { peer: 'carl@localhost', peerFull: 'carl@localhost/r', direction: 'in', stanza: x('message', { type: 'chat' }, x('body', {}, `c${i}`)), body: `c${i}`, createdAt: start + i }),
      );
      await store.flush();
      await Promise.all(adds);
      const erin = await login(t, { user: 'erin', password: 'erin-pw', resource: 'e' });
      try {
        const first = await mamQuery(erin, { max: 10 });
        expect(first.count, 'no <count/> past the limit').to.equal(undefined);
        expect(first.firstIndex, 'the first page starts at 0').to.equal(0);
        expect(first.bodies).to.deep.equal(Array.from({ length: 10 }, (_, i) => `c${i}`));
        const middle = await mamQuery(erin, { max: 10, after: first.last! });
        expect(middle.fin.getChild('set', NS_RSM)!.getChild('first')!.attrs.index, 'no index where it would need the count').to.equal(undefined);
        expect(middle.bodies[0]).to.equal('c10');
        const last = await mamQuery(erin, { max: 10, before: '' });
        expect(last.complete).to.equal(false);
        expect(last.bodies.at(-1)).to.equal(`c${COUNT_LIMIT}`);
        expect((await mamQuery(erin, { max: 0 })).count, 'RSM max 0 asks for the count').to.equal(COUNT_LIMIT + 1);
        // Below the limit, exact: the last 100 by time.
        const recent = await mamQuery(erin, { max: 10, before: '', start: new Date(start + COUNT_LIMIT - 99).toISOString() });
        expect(recent.count).to.equal(100);
        expect(recent.firstIndex).to.equal(90);
      } finally {
        await stopAll(erin);
      }
    });

    it('delivers a message whose archiving fails, without a stanza-id, and logs the failure', async () => {
      const db = t.server.services.storage.db();
      await db.schema.renameTable('mam_messages', 'mam_messages_away');
      try {
        const arrived = next(bob!, (s) => s.is('message') && s.getChildText('body') === 'not archived', 10_000);
        await alice!.send(xml('message', { to: 'bob@localhost', type: 'chat', id: 'na' }, xml('body', {}, 'not archived')));
        const message = await arrived;
        expect(message.getChildren('stanza-id', NS_SID).filter((s) => s.attrs.by === 'bob@localhost')).to.deep.equal([]);
        const logged = t.logs.filter((l) => l.msg === 'a message could not be archived');
        expect(logged.map((l) => l.direction).sort(), 'both archive writes failed and were logged').to.deep.equal(['in', 'out']);
      } finally {
        await db.schema.renameTable('mam_messages_away', 'mam_messages');
      }
      // And the next message is archived again.
      const arrived = next(bob!, (s) => s.is('message') && s.getChildText('body') === 'archived again', 10_000);
      await alice!.send(xml('message', { to: 'bob@localhost', type: 'chat', id: 'aa' }, xml('body', {}, 'archived again')));
      expect((await arrived).getChildren('stanza-id', NS_SID).some((s) => s.attrs.by === 'bob@localhost')).to.equal(true);
      expect((await rowsOf('bob', 'in')).at(-1)).to.equal('archived again');
    });
  });
}
