/**
 * The message archive in the client interop matrix (issue 16): XMPP client software nobody here wrote logs
 * in on a second device after messages were exchanged on another one, and fetches that history from the
 * real server's archive (mod_mam, XEP-0313 urn:xmpp:mam:2 with XEP-0059 paging); slixmpp also pages
 * forwards and backwards over 1 000 archived messages, and nbxmpp forwards. The archive tests under
 * test/mam speak XEP-0313 as the spec reads to their authors; what proves that clients can use it is the
 * clients themselves, with their own query building, result collection and paging.
 *
 *   @xmpp/client (npm)                   the query written by hand (it has no MAM API), its iqCaller
 *   slixmpp (Debian python3-slixmpp)     its xep_0313 plugin   test/interop/clients/slixmpp_client.py --mam-*
 *   nbxmpp (Debian python3-nbxmpp)       its MAM module, paging as Gajim does (forwards only: make_query
 *                                        has no <before/>)     test/interop/clients/nbxmpp_client.py --mam
 *   Converse.js (npm converse.js)        headless Chromium: the login form, then the chat with the contact,
 *                                        which Converse fills from the archive when it opens
 *
 * Messages are exchanged the way people exchange them: a first device of the account (this suite's
 * @xmpp/client helper, or the client itself) is online and chats with a peer account; the device under
 * test logs in afterwards, when nothing but the archive holds that history (mod_offline is not loaded).
 * The 1 000 messages for paging come from a helper client writing to an online account, as fast as the
 * server takes them. Where a client reads less than the server sends (nbxmpp 4.2.2 never reads
 * <first index=''/>) or pages in its own way (slixmpp 1.8.3's reverse iterator stops after one page), the
 * test says so where it compares. A failure shows the client's own output (the helper scripts' JSON events
 * and debug logs, @xmpp/client traffic, Converse's browser console).
 */
import { expect } from 'chai';
import { join } from 'node:path';
import { client as xmppClient } from '@xmpp/client';
import type { Page } from 'playwright-core';
import { TestServer, type RawConfig } from '../support/server.js';
import { login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { CA, PYTHON, SCRIPTS, ExternalClient, converseInBrowser, debianVersion, killAll, npmVersion, type ClientEvent } from './external.js';

const ADMIN = 'admin@localhost:adminpass';
const HOST = 'localhost';
const NS_MAM = 'urn:xmpp:mam:2';
const NS_RSM = 'http://jabber.org/protocol/rsm';
const NS_SID = 'urn:xmpp:sid:0';
const NS_FORWARD = 'urn:xmpp:forward:0';
const NS_DELAY = 'urn:xmpp:delay';

/** The accounts: each client with the peer it chats with; `pager` holds the 1 000 messages `filler` wrote. */
const ACCOUNTS = ['xmppjs', 'xmppjs-peer', 'slixmpp', 'slixmpp-peer', 'nbxmpp', 'nbxmpp-peer', 'pager', 'filler', 'converse', 'converse-peer'] as const;
const password = (user: string) => `${user}-pw`;
const jidOf = (user: string) => `${user}@${HOST}`;

/** How many messages the paging test archives, and the page size (mod_mam's max_page, ejabberd's 50). */
const MANY = 1000;
const PAGE = 50;
const manyBody = (i: number) => `archived ${String(i).padStart(4, '0')}`;

/** The matrix's server (c2s with STARTTLS required, /api, ws:// /websocket) with the archive, disco (clients ask it whether the account has MAM) and the roster. */
function mamConfig(): RawConfig {
  return xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_mam: {} });
}

/** One page of an archive query as the test sees it, whoever made it. */
interface ArchivePage {
  ids: string[];
  bodies: string[];
  complete: boolean;
  first?: string;
  firstIndex?: number;
  last?: string;
  count?: number;
}

describe('Message archive interop: XMPP software nobody here wrote fetches its history (XEP-0313)', function () {
  this.timeout(120_000);
  let t: TestServer;
  const helpers: Client[] = [];

  const api = async (command: string, args: Record<string, unknown>) => {
    const res = await t.api(command, args, { basic: ADMIN });
    expect(res.status, `${command}: ${res.text}`).to.equal(200);
    return res.body;
  };
  /** Waits until `user`'s archive holds `count` messages, as get_mam_count says. */
  const archived = async (user: string, count: number, ms = 30_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const now = (await api('get_mam_count', { user, host: HOST })) as number;
      if (now === count) return;
      if (Date.now() > deadline) throw new Error(`${user}'s archive holds ${now} messages, not ${count}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  /** A device of `user` logged in with this suite's helper, available. */
  const helper = async (user: string, resource: string): Promise<Client> => {
    const client = await login(t, { user, password: password(user), resource });
    helpers.push(client);
    await client.send(xml('presence'));
    return client;
  };
  /**
   * The next stanza `xmpp` receives that matches, waited for from now on; its failure carries the client's
   * output, and is never unhandled (.mocharc.json makes that fatal, and a step before the await may fail first).
   */
  const awaiting = (xmpp: Client, predicate: (s: Element) => boolean, ms: number, diagnostics: () => string): Promise<Element> => {
    const stanza = next(xmpp, predicate, ms).catch((err: Error) => Promise.reject(new Error(`${err.message}\n${diagnostics()}`)));
    stanza.catch(() => {});
    return stanza;
  };
  const chatWith = (body: string) => (s: Element) => s.is('message') && s.getChildText('body') === body;

  /**
   * The paging tests' archive, filled once whichever test needs it first: pager is online on one device and
   * filler writes it MANY messages, as fast as the server takes them; resolves once all are archived.
   */
  let filled: Promise<void> | undefined;
  const pagerArchive = () =>
    (filled ??= (async () => {
      const owner = await helper('pager', 'desk');
      const filler = await helper('filler', 'filler');
      const last = awaiting(owner, chatWith(manyBody(MANY - 1)), 120_000, () => 'the owner did not receive the last message');
      for (let i = 0; i < MANY; i++) await filler.send(xml('message', { to: jidOf('pager'), type: 'chat' }, xml('body', {}, manyBody(i))));
      await last;
      await archived('pager', MANY, 60_000);
      await stopAll(owner, filler);
    })());
  /** A page's size, completeness and RSM summary. */
  const summary = ({ ids, complete, first, firstIndex, last, count }: ArchivePage) => ({ size: ids.length, complete, first, firstIndex, last, count });
  /** The pages a helper script reported (its mam_page events), as the tests compare them. */
  const pages = (client: ExternalClient, direction: 'forward' | 'backward'): Array<ArchivePage & { messages: ClientEvent[] }> =>
    client.events
      .filter((e) => e.event === 'mam_page' && e.direction === direction)
      .map((e) => ({
        messages: e.messages as ClientEvent[],
        ids: (e.messages as ClientEvent[]).map((m) => m.id as string),
        bodies: (e.messages as ClientEvent[]).map((m) => m.body as string),
        complete: e.complete,
        first: e.first ?? undefined,
        firstIndex: e.first_index ?? undefined,
        last: e.last ?? undefined,
        count: e.count ?? undefined,
      }));
  /**
   * Asserts that forward pages cover the paging archive: PAGE each, in place, joined without gap or duplicate;
   * returns their ids. `indexOf` is the <first index=''/> the client read from the page at `offset`.
   */
  const expectWholeArchiveForward = (forward: ArchivePage[], diagnostics: () => string, indexOf = (offset: number): number | undefined => offset): string[] => {
    const pageCount = MANY / PAGE;
    expect(forward.length, diagnostics()).to.equal(pageCount);
    for (const [i, page] of forward.entries()) {
      // Each page: PAGE messages, its place in the whole, its ends named, and only the last one complete.
      expect(summary(page), `forward page ${i}`).to.deep.equal({ size: PAGE, complete: i === pageCount - 1, first: page.ids[0], firstIndex: indexOf(i * PAGE), last: page.ids.at(-1), count: MANY });
    }
    const ids = forward.flatMap((p) => p.ids);
    // Joined, the pages are the archive in the order it was written: no gap, no duplicate.
    expect(forward.flatMap((p) => p.bodies)).to.deep.equal(Array.from({ length: MANY }, (_, i) => manyBody(i)));
    expect(new Set(ids).size).to.equal(MANY);
    return ids;
  };

  before(async () => {
    t = await TestServer.start(mamConfig());
    await t.bootstrapAdmin();
    for (const user of ACCOUNTS) await t.register(user, HOST, password(user));
    // Converse shows its contacts from the roster: the peer is one, as in the interop matrix.
    expect(await api('add_rosteritem', { localuser: 'converse', localhost: HOST, user: 'converse-peer', host: HOST, nick: 'Peer', groups: ['Interop'], subs: 'both' })).to.equal(0);
  });
  afterEach(async () => {
    await killAll();
    await stopAll(...helpers.splice(0));
  });
  after(() => t?.stop());

  describe(`@xmpp/client ${npmVersion('@xmpp/client')} (npm, its own defaults; the query written by hand)`, () => {
    /** The library as an application uses it: username and password, its own mechanisms, traffic kept. */
    const app = async (resource: string) => {
      const xmpp = xmppClient({ service: `xmpp://127.0.0.1:${t.server.portOf('service_c2s')}`, domain: HOST, username: 'xmppjs', password: password('xmppjs'), resource });
      const traffic: string[] = [];
      xmpp.on('send', (e: Element) => traffic.push(`SEND ${e.toString()}`));
      xmpp.on('element', (e: Element) => traffic.push(`RECV ${e.toString()}`));
      xmpp.on('error', (err: Error) => traffic.push(`ERROR ${err.message}`));
      (xmpp as any).reconnect.stop();
      const log = () => `--- @xmpp/client (${resource}) traffic:\n${traffic.join('\n')}`;
      await xmpp.start().catch((err: Error) => Promise.reject(new Error(`${err.message}\n${log()}`)));
      return { xmpp, log };
    };

    it('a second device finds the history of the first in the archive: bodies, order, stanza-ids, RSM summary, complete', async () => {
      const peer = await helper('xmppjs-peer', 'peer');
      const desk = await app('desk');
      /** The stanza-id the archive gave each message the desk received, by body. */
      const stanzaIds = new Map<string, string>();
      const sent: string[] = [];
      try {
        await desk.xmpp.send(xml('presence'));
        for (let i = 1; i <= 3; i++) {
          const out = `from the desk, ${i}`;
          const atPeer = awaiting(peer, chatWith(out), 10_000, desk.log);
          await desk.xmpp.send(xml('message', { to: jidOf('xmppjs-peer'), type: 'chat' }, xml('body', {}, out)));
          await atPeer;
          const back = `to the desk, ${i}`;
          const atDesk = awaiting(desk.xmpp, chatWith(back), 10_000, desk.log);
          await peer.send(xml('message', { to: `${jidOf('xmppjs')}/desk`, type: 'chat' }, xml('body', {}, back)));
          const received = await atDesk;
          const sid = received.getChildren('stanza-id', NS_SID).find((s) => s.attrs.by === jidOf('xmppjs'));
          expect(sid, `${received}`).to.exist;
          stanzaIds.set(back, sid!.attrs.id as string);
          sent.push(out, back);
        }
      } finally {
        await stopAll(desk.xmpp);
      }
      await archived('xmppjs', 6);

      const phone = await app('phone');
      try {
        // What a client asks before it relies on the archive: the account's disco#info names urn:xmpp:mam:2.
        const info = await phone.xmpp.iqCaller.request(xml('iq', { type: 'get', to: jidOf('xmppjs') }, xml('query', { xmlns: 'http://jabber.org/protocol/disco#info' })));
        expect(info.getChild('query')!.getChildren('feature').map((f) => f.attrs.var), phone.log()).to.include(NS_MAM);

        const results: Element[] = [];
        const onStanza = (s: Element) => {
          const result = s.is('message') ? s.getChild('result', NS_MAM) : undefined;
          if (result?.attrs.queryid === 'history') results.push(s);
        };
        phone.xmpp.on('stanza', onStanza);
        const answer = await phone.xmpp.iqCaller.request(
          xml(
            'iq',
            { type: 'set' },
            xml(
              'query',
              { xmlns: NS_MAM, queryid: 'history' },
              xml('x', { xmlns: 'jabber:x:data', type: 'submit' }, xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, NS_MAM)), xml('field', { var: 'with' }, xml('value', {}, jidOf('xmppjs-peer')))),
              xml('set', { xmlns: NS_RSM }, xml('max', {}, '50')),
            ),
          ),
          20_000,
        );
        phone.xmpp.off('stanza', onStanza);

        const forwarded = results.map((m) => m.getChild('result', NS_MAM)!.getChild('forwarded', NS_FORWARD)!);
        const messages = forwarded.map((f) => f.getChild('message')!);
        const ids = results.map((m) => m.getChild('result', NS_MAM)!.attrs.id as string);
        // Every message of the chat, in the order it was written, each sent to the device that asked.
        expect(messages.map((m) => m.getChildText('body')), phone.log()).to.deep.equal(sent);
        expect(results.map((m) => m.attrs.to)).to.deep.equal(results.map(() => `${jidOf('xmppjs')}/phone`));
        expect(results.map((m) => m.attrs.from)).to.deep.equal(results.map(() => jidOf('xmppjs')));
        // What the desk received came from the peer's device; its archive id is the stanza-id the desk got.
        for (const [i, body] of sent.entries()) {
          if (!body.startsWith('to the desk')) continue;
          expect(messages[i]!.attrs.from).to.equal(`${jidOf('xmppjs-peer')}/peer`);
          expect(ids[i], body).to.equal(stanzaIds.get(body));
        }
        for (const [i, body] of sent.entries()) if (body.startsWith('from the desk')) expect(messages[i]!.attrs.to, body).to.equal(jidOf('xmppjs-peer'));
        expect(new Set(ids).size).to.equal(6);
        // Archive times, as delays, in order.
        const stamps = forwarded.map((f) => Date.parse(f.getChild('delay', NS_DELAY)!.attrs.stamp as string));
        expect(stamps.every((s, i) => Number.isFinite(s) && (i === 0 || s >= stamps[i - 1]!)), `${stamps}`).to.equal(true);
        // The <fin/>: the whole history in one page, and the XEP-0059 summary naming its ends.
        const fin = answer.getChild('fin', NS_MAM)!;
        expect(fin.attrs.complete).to.equal('true');
        const set = fin.getChild('set', NS_RSM)!;
        expect({ first: set.getChildText('first'), index: set.getChild('first')?.attrs.index, last: set.getChildText('last'), count: set.getChildText('count') }).to.deep.equal({
          first: ids[0],
          index: '0',
          last: ids[5],
          count: '6',
        });
      } finally {
        await stopAll(phone.xmpp);
      }
    });
  });

  describe(`slixmpp ${debianVersion('python3-slixmpp')} (Debian python3-slixmpp, its xep_0313 plugin)`, () => {
    const run = (user: string, resource: string, args: string[], timeoutMs = 50_000) =>
      ExternalClient.spawn(
        `slixmpp (${user}/${resource})`,
        [PYTHON, join(SCRIPTS, 'slixmpp_client.py'), '--jid', `${jidOf(user)}/${resource}`, '--password', password(user), '--port', String(t.server.portOf('service_c2s')), '--ca', CA, ...args],
        { timeoutMs },
      );
    it('a second device fetches the chat its first device had, with the plugin\'s iterator', async () => {
      const peer = await helper('slixmpp-peer', 'peer');
      // The first device: slixmpp itself, chatting with the peer as the interop matrix does.
      let desk: ExternalClient | undefined;
      const atPeer = awaiting(peer, chatWith('hello from the slixmpp desk'), 20_000, () => desk!.diagnostics('the peer got no message'));
      desk = run('slixmpp', 'desk', ['--peer', jidOf('slixmpp-peer'), '--send', 'hello from the slixmpp desk']);
      const message = await atPeer;
      await peer.send(xml('message', { to: message.attrs.from, type: 'chat' }, xml('body', {}, 'hello back, slixmpp desk')));
      expect((await desk.exit()).code, desk.diagnostics()).to.equal(0);
      const received = await desk.event('received', (e) => e.event === 'received');
      expect(received.stanza_id?.by, desk.diagnostics()).to.equal(jidOf('slixmpp'));
      await archived('slixmpp', 2);

      const phone = run('slixmpp', 'phone', ['--mam-forward', '--mam-page', String(PAGE)]);
      expect((await phone.exit()).code, phone.diagnostics()).to.equal(0);
      const [page, ...more] = pages(phone, 'forward');
      expect(more, phone.diagnostics()).to.deep.equal([]);
      expect(page!.messages.map((m) => ({ from: m.from, to: m.to, body: m.body })), phone.diagnostics()).to.deep.equal([
        { from: `${jidOf('slixmpp')}/desk`, to: jidOf('slixmpp-peer'), body: 'hello from the slixmpp desk' },
        { from: `${jidOf('slixmpp-peer')}/peer`, to: `${jidOf('slixmpp')}/desk`, body: 'hello back, slixmpp desk' },
      ]);
      // The query id slixmpp chose came back on each result, and the received message's id is the desk's stanza-id.
      expect(new Set(page!.messages.map((m) => m.queryid)).size).to.equal(1);
      expect(page!.ids[1]).to.equal(received.stanza_id.id);
      expect(page).to.deep.include({ complete: true, first: page!.ids[0], firstIndex: 0, last: page!.ids[1], count: 2 });
      expect(await phone.event('mam_done', (e) => e.event === 'mam_done')).to.deep.include({ messages: 2 });
    });

    it(`pages forwards and backwards over ${MANY} archived messages without gaps or duplicates`, async function () {
      this.timeout(240_000);
      await pagerArchive();
      const phone = run('pager', 'phone', ['--mam-forward', '--mam-backward', '--mam-page', String(PAGE), '--wait', '150'], 180_000);
      expect((await phone.exit(180_000)).code, phone.diagnostics()).to.equal(0);
      const pageCount = MANY / PAGE;
      const forwardIds = expectWholeArchiveForward(pages(phone, 'forward'), () => phone.diagnostics());
      expect(await phone.event('mam_done', (e) => e.event === 'mam_done' && e.direction === 'forward')).to.deep.include({ messages: MANY });

      const backward = pages(phone, 'backward');
      expect(backward.length, phone.diagnostics()).to.equal(pageCount);
      for (const [i, page] of backward.entries()) {
        // Newest page first; each page still in chronological order; complete once the oldest is reached.
        expect(summary(page), `backward page ${i}`).to.deep.equal({
          size: PAGE,
          complete: i === pageCount - 1,
          first: page.ids[0],
          firstIndex: MANY - (i + 1) * PAGE,
          last: page.ids.at(-1),
          count: MANY,
        });
      }
      // The same archive from the other end: the same ids, in the same places.
      expect([...backward].reverse().flatMap((p) => p.ids)).to.deep.equal(forwardIds);
      expect(await phone.event('mam_done', (e) => e.event === 'mam_done' && e.direction === 'backward')).to.deep.include({ messages: MANY });
    });
  });

  describe(`nbxmpp ${debianVersion('python3-nbxmpp')} (Debian python3-nbxmpp, Gajim's library: its MAM module)`, () => {
    const run = (user: string, resource: string, args: string[], timeoutMs = 50_000) =>
      ExternalClient.spawn(
        `nbxmpp (${user}/${resource})`,
        [PYTHON, join(SCRIPTS, 'nbxmpp_client.py'), '--jid', `${jidOf(user)}/${resource}`, '--password', password(user), '--port', String(t.server.portOf('service_c2s')), '--ca', CA, ...args],
        { timeoutMs },
      );
    /**
     * The <first index=''/> nbxmpp reads: none. Its parse_rsm (nbxmpp/modules/rsm.py) takes <first>'s text and
     * calls getAttr('index') on that string, so first_index is always None (the server sends the index: the
     * other clients read it). Should a later nbxmpp read it, this fails and the index is to be checked here too.
     */
    const NBXMPP_INDEX = undefined;

    it('a second device fetches the chat its first device had, with make_query', async () => {
      const peer = await helper('nbxmpp-peer', 'peer');
      let desk: ExternalClient | undefined;
      const atPeer = awaiting(peer, chatWith('hello from the nbxmpp desk'), 20_000, () => desk!.diagnostics('the peer got no message'));
      desk = run('nbxmpp', 'desk', ['--peer', jidOf('nbxmpp-peer'), '--send', 'hello from the nbxmpp desk']);
      const message = await atPeer;
      await peer.send(xml('message', { to: message.attrs.from, type: 'chat' }, xml('body', {}, 'hello back, nbxmpp desk')));
      expect((await desk.exit()).code, desk.diagnostics()).to.equal(0);
      await archived('nbxmpp', 2);

      const phone = run('nbxmpp', 'phone', ['--mam', '--mam-page', String(PAGE)]);
      expect((await phone.exit()).code, phone.diagnostics()).to.equal(0);
      const [page, ...more] = pages(phone, 'forward');
      expect(more, phone.diagnostics()).to.deep.equal([]);
      expect(page!.messages.map((m) => ({ from: m.from, to: m.to, body: m.body, archive: m.archive })), phone.diagnostics()).to.deep.equal([
        { from: `${jidOf('nbxmpp')}/desk`, to: jidOf('nbxmpp-peer'), body: 'hello from the nbxmpp desk', archive: jidOf('nbxmpp') },
        { from: `${jidOf('nbxmpp-peer')}/peer`, to: `${jidOf('nbxmpp')}/desk`, body: 'hello back, nbxmpp desk', archive: jidOf('nbxmpp') },
      ]);
      expect(summary(page!)).to.deep.equal({ size: 2, complete: true, first: page!.ids[0], firstIndex: NBXMPP_INDEX, last: page!.ids[1], count: 2 });
      // Nothing of the archive arrived outside a query nbxmpp made.
      expect(phone.events.filter((e) => e.event === 'mam_unexpected'), phone.diagnostics()).to.deep.equal([]);
    });

    it(`pages forwards over ${MANY} archived messages without gaps or duplicates`, async function () {
      this.timeout(240_000);
      await pagerArchive();
      const phone = run('pager', 'nbxmpp', ['--mam', '--mam-page', String(PAGE), '--wait', '150'], 180_000);
      expect((await phone.exit(180_000)).code, phone.diagnostics()).to.equal(0);
      expectWholeArchiveForward(pages(phone, 'forward'), () => phone.diagnostics(), () => NBXMPP_INDEX);
      expect(await phone.event('mam_done', (e) => e.event === 'mam_done')).to.deep.include({ messages: MANY });
    });
  });

  describe(`Converse.js ${npmVersion('converse.js')} (npm converse.js) in Debian's Chromium ${debianVersion('chromium')}`, () => {
    const converse = converseInBrowser(() => `ws://127.0.0.1:${t.port}/websocket`);
    const diagnostics = converse.diagnostics;
    /** The contact as the roster shows it: its name, in its group. */
    const contact = (p: Page) => p.locator('.roster-group[data-group="Interop"] .open-chat', { hasText: 'Peer' });

    it('logs in after a chat on another device and shows that chat, from the archive, when the person opens it', async () => {
      // The chat happens while Converse is not running: on another device of the account, with the peer.
      const peer = await helper('converse-peer', 'peer');
      const phone = await helper('converse', 'phone');
      const lines = ['Are you there?', 'Yes, on my phone', 'See you at noon'];
      const atPhone = awaiting(phone, chatWith(lines[0]!), 10_000, () => 'the phone got no message');
      await peer.send(xml('message', { to: jidOf('converse'), type: 'chat' }, xml('body', {}, lines[0]!)));
      await atPhone;
      const atPeer = awaiting(peer, chatWith(lines[1]!), 10_000, () => 'the peer got no answer');
      await phone.send(xml('message', { to: jidOf('converse-peer'), type: 'chat' }, xml('body', {}, lines[1]!)));
      await atPeer;
      const again = awaiting(phone, chatWith(lines[2]!), 10_000, () => 'the phone got no message');
      await peer.send(xml('message', { to: jidOf('converse'), type: 'chat' }, xml('body', {}, lines[2]!)));
      await again;
      await archived('converse', 3);
      await stopAll(phone);

      const p = await converse.logIn(jidOf('converse'), password('converse'));
      await contact(p).waitFor({ timeout: 20_000 }).catch((err) => Promise.reject(new Error(`${err.message}\n${diagnostics()}`)));
      await contact(p).click();
      // What the person sees: the three lines in the chat view, in the order they were written.
      const texts = p.locator('converse-chats .chat-msg__text');
      await texts.filter({ hasText: lines[2]! }).waitFor({ timeout: 20_000 }).catch((err) => Promise.reject(new Error(`${err.message}\n${diagnostics()}`)));
      expect(await texts.allTextContents(), diagnostics()).to.deep.equal(lines);
      // The answer written on the phone shows as the account's own message, the peer's lines as the peer's.
      const side = (sender: 'me' | 'them') => p.locator(`converse-chats .chat-msg__content--${sender} .chat-msg__text`).allTextContents();
      expect({ me: await side('me'), them: await side('them') }, diagnostics()).to.deep.equal({ me: [lines[1]], them: [lines[0], lines[2]] });
    });
  });
});
