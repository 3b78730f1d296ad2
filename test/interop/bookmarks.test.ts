/**
 * Bookmarks across clients in the interop matrix (issue 17): another client of the account publishes a room
 * bookmark to the account's PEP service (mod_pubsub), and Converse.js in headless Chromium, logged in as the
 * same account, shows it by its name in its bookmarks list (the "Bookmarks" entry of the Groupchats menu): what
 * a person sees. Both orders: the bookmark published before Converse logs in (Converse fetches the node), and
 * published while Converse is open (a PEP notification, which the server sends only to sessions whose entity
 * capabilities ask for `<node>+notify`, XEP-0115, verified by hash).
 *
 * Which node Converse reads is its choice, from the account's disco#info (Converse 14.0.0, the vendored
 * node_modules/converse.js, src/headless/plugins/bookmarks/collection.js and parsers.js):
 *   - with `urn:xmpp:bookmarks:1#compat` advertised: XEP-0402, `<items node='urn:xmpp:bookmarks:1'/>`, one
 *     item per room (id = room JID), pushes of that node accepted;
 *   - without it: XEP-0048 in PEP (XEP-0223), `<items node='storage:bookmarks'/>`, one item `current` holding a
 *     `<storage xmlns='storage:bookmarks'/>` with every room. Private XML storage (XEP-0049) is never used.
 *   Either way it needs `pubsub#publish-options` on the account (checkBookmarksSupport), and it announces only
 *   `storage:bookmarks+notify` in its capabilities, never `urn:xmpp:bookmarks:1+notify`.
 *
 * This server does not advertise `#compat` (decisions.md, "Bookmarks between private storage and PEP"), so
 * Converse reads `storage:bookmarks`; mod_private carries a XEP-0402 publish or retraction into that node
 * (XEP-0402 §5.3, announced as `urn:xmpp:bookmarks:1#compat-pep`), whose notification reaches Converse's
 * `storage:bookmarks+notify`. The tests: a XEP-0402 bookmark (@xmpp/client publishes `urn:xmpp:bookmarks:1`
 * with XEP-0402 §3's publish-options) and a XEP-0048-in-PEP bookmark (`storage:bookmarks`), each published
 * before Converse logs in and while it is open, show by name in Converse's list. When one does not show, the
 * failure names what the account's disco#info advertised and which nodes Converse fetched.
 */
import { expect } from 'chai';
import type { Page } from 'playwright-core';
import { TestServer, type RawConfig } from '../support/server.js';
import { login, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { NS_BOOKMARKS, NS_DISCO_INFO, publish } from '../pubsub/helpers.js';
import { converseInBrowser, debianVersion, killAll, npmVersion } from './external.js';

const HOST = 'localhost';
const NS_BOOKMARKS_LEGACY = 'storage:bookmarks';
const COMPAT = `${NS_BOOKMARKS}#compat`;
/** XEP-0402 §3 (and what Converse itself publishes with): the node keeps every bookmark, only the owner reads it. */
const BOOKMARK_OPTIONS = {
  'pubsub#persist_items': 'true',
  'pubsub#max_items': 'max',
  'pubsub#send_last_published_item': 'never',
  'pubsub#access_model': 'whitelist',
};
const password = (user: string) => `${user}-pw`;
const jidOf = (user: string) => `${user}@${HOST}`;
/** One account per test: Converse and the other client share it, and no test sees another's bookmarks. */
const ACCOUNTS = ['bm402-before', 'bm402-live', 'bm48-before', 'bm48-live'] as const;

/** The interop matrix's server (c2s with STARTTLS required, /api, ws:// /websocket) with PEP, private storage, the roster, disco and rooms. */
function bookmarksConfig(): RawConfig {
  return xmppConfig({ mod_admin_extra: {}, mod_roster: {}, mod_presence: {}, mod_disco: {}, mod_private: {}, mod_pubsub: {}, mod_muc: {} });
}

/** A XEP-0402 bookmark: item id = the room, `<conference/>` with its name, autojoin and nick. */
const conference402 = (name: string, nick: string) => xml('conference', { xmlns: NS_BOOKMARKS, name, autojoin: 'false' }, xml('nick', {}, nick));
/** XEP-0048's `<storage/>` with these rooms, the single item `current` of `storage:bookmarks`. */
const storage48 = (...rooms: Array<{ jid: string; name: string; nick: string }>) =>
  xml('storage', { xmlns: NS_BOOKMARKS_LEGACY }, ...rooms.map((r) => xml('conference', { jid: r.jid, name: r.name, autojoin: 'false' }, xml('nick', {}, r.nick))));

describe(`Bookmarks from another client in Converse.js ${npmVersion('converse.js')} (npm converse.js) in Debian's Chromium ${debianVersion('chromium')}`, function () {
  this.timeout(120_000);
  let t: TestServer;
  const helpers: Client[] = [];

  before(async () => {
    t = await TestServer.start(bookmarksConfig());
    await t.bootstrapAdmin();
    for (const user of ACCOUNTS) await t.register(user, HOST, password(user));
  });
  afterEach(async () => {
    await killAll();
    await stopAll(...helpers.splice(0));
  });
  after(() => t?.stop());

  const converse = converseInBrowser(() => `ws://127.0.0.1:${t.port}/websocket`);

  /** The other client: @xmpp/client (this suite's helper) on the same account, another resource. */
  const otherClient = async (user: string): Promise<Client> => {
    const client = await login(t, { user, password: password(user), resource: 'phone' });
    helpers.push(client);
    return client;
  };

  /** The features the account's disco#info advertises, as the other client reads them. */
  const accountFeatures = async (client: Client, user: string): Promise<string[]> => {
    const info = await client.iqCaller.request(xml('iq', { type: 'get', to: jidOf(user) }, xml('query', { xmlns: NS_DISCO_INFO })), 10_000);
    return info.getChild('query', NS_DISCO_INFO)!.getChildren('feature').map((f: Element) => f.attrs.var as string);
  };

  /** The PEP node Converse asked for, from its console (loglevel debug prints every stanza it sends). */
  const nodesConverseFetched = () => [...converse.diagnostics().matchAll(/<items node="([^"]+)"/g)].map((m) => m[1]!);

  /**
   * Why a XEP-0402 bookmark did not show: the gap, precisely (the disco feature missing on the account, and the
   * node Converse read instead), then the browser console.
   */
  const gap = async (client: Client, user: string, live = false): Promise<string> => {
    const features = await accountFeatures(client, user);
    const fetched = [...new Set(nodesConverseFetched())];
    const notify = live
      ? `; a push of ${NS_BOOKMARKS} needs ${NS_BOOKMARKS}+notify in Converse's verified capabilities: ` +
        `${(await t.server.services.storage.db()('pubsub_caps')).some((row: { features: string }) => row.features.includes(`${NS_BOOKMARKS}+notify`)) ? 'there' : 'absent'}`
      : '';
    return (
      `server gap: ${jidOf(user)}'s disco#info advertises ${features.includes(COMPAT) ? '' : 'no '}'${COMPAT}' ` +
      `(pubsub#publish-options: ${features.includes('http://jabber.org/protocol/pubsub#publish-options')}); ` +
      `Converse fetched the node(s) ${JSON.stringify(fetched)}${fetched.includes(NS_BOOKMARKS) ? '' : `, so it never reads ${NS_BOOKMARKS}`}${notify}\n${converse.diagnostics()}`
    );
  };

  /** Logs in through Converse's login form and waits until its bookmarks are loaded (it fetched the node). */
  const converseLogIn = async (user: string): Promise<Page> => {
    const p = await converse.logIn(jidOf(user), password(user));
    await p.locator('converse-controlbox .controlbox-heading--groupchats').waitFor({ timeout: 30_000 }).catch((err) => Promise.reject(new Error(`${err.message}\n${converse.diagnostics()}`)));
    // Converse's bookmarks are initialized once it has asked the server for the node (either one).
    await waitFor(() => nodesConverseFetched().some((n) => n === NS_BOOKMARKS || n === NS_BOOKMARKS_LEGACY), 30_000, () => `Converse never fetched its bookmarks\n${converse.diagnostics()}`);
    return p;
  };

  /** Opens the bookmarks list as a person does: the Groupchats menu, then "Bookmarks". */
  const openBookmarksList = async (p: Page) => {
    await p.locator('converse-controlbox converse-rooms-list converse-dropdown .dropdown-toggle').click();
    await p.locator('converse-controlbox .show-bookmark-list-modal').click();
    await p.locator('converse-bookmark-list-modal .bookmarks.rooms-list').waitFor({ state: 'attached', timeout: 10_000 });
  };
  /** The names the bookmarks list shows. */
  const shownNames = (p: Page) => p.locator('converse-bookmark-list-modal .bookmarks.rooms-list .room-item a.list-item-link').allTextContents();
  /** Waits until the list shows `name`; rejects with `why()` otherwise. */
  const shows = async (p: Page, name: string, why: () => Promise<string>, ms = 20_000) => {
    const found = await p
      .locator('converse-bookmark-list-modal .bookmarks.rooms-list .room-item a.list-item-link', { hasText: name })
      .first()
      .waitFor({ timeout: ms })
      .then(() => true, () => false);
    if (!found) throw new Error(`Converse's bookmarks list does not show "${name}" (it shows ${JSON.stringify(await shownNames(p))})\n${await why()}`);
  };

  /**
   * Waits until the server has verified Converse's entity capabilities with `storage:bookmarks+notify` (the
   * only bookmarks +notify Converse announces): a notification published before that is not sent to it.
   */
  const converseCapsVerified = () =>
    waitFor(
      async () => (await t.server.services.storage.db()('pubsub_caps')).some((row: { features: string }) => row.features.includes(`${NS_BOOKMARKS_LEGACY}+notify`)),
      30_000,
      () => `the server never verified Converse's capabilities (pubsub_caps has no hash with ${NS_BOOKMARKS_LEGACY}+notify)\n${converse.diagnostics()}`,
    );

  describe('XEP-0402 (urn:xmpp:bookmarks:1), as issue 17 asks', () => {
    it('shows a bookmark another client published before Converse logged in', async () => {
      const user = 'bm402-before';
      const phone = await otherClient(user);
      const room = 'tea@conference.localhost';
      expect(await publish(phone, NS_BOOKMARKS, conference402('Tea Room', 'al'), { id: room, publishOptions: BOOKMARK_OPTIONS })).to.equal(room);

      const p = await converseLogIn(user);
      await openBookmarksList(p);
      await shows(p, 'Tea Room', () => gap(phone, user));
    });

    // Converse 14.0.0 announces only storage:bookmarks+notify: the push that reaches it is the storage:bookmarks
    // item the server rewrites from the XEP-0402 items (XEP-0402 §5.3).
    it('shows a bookmark another client publishes while Converse is open', async () => {
      const user = 'bm402-live';
      const phone = await otherClient(user);
      const p = await converseLogIn(user);
      await converseCapsVerified();
      await openBookmarksList(p);
      const room = 'coffee@conference.localhost';
      await publish(phone, NS_BOOKMARKS, conference402('Coffee Corner', 'al'), { id: room, publishOptions: BOOKMARK_OPTIONS });
      await shows(p, 'Coffee Corner', () => gap(phone, user, true));
    });
  });

  describe('XEP-0048 in PEP (storage:bookmarks), the node Converse reads on this server', () => {
    it('shows a bookmark another client published before Converse logged in', async () => {
      const user = 'bm48-before';
      const phone = await otherClient(user);
      // The path Converse takes here is decided by the account's features: check it is this one.
      expect(await accountFeatures(phone, user)).to.include('http://jabber.org/protocol/pubsub#publish-options').and.not.include(COMPAT);
      await publish(phone, NS_BOOKMARKS_LEGACY, storage48({ jid: 'tea@conference.localhost', name: 'Tea Room', nick: 'al' }), { id: 'current', publishOptions: BOOKMARK_OPTIONS });

      const p = await converseLogIn(user);
      expect(nodesConverseFetched(), converse.diagnostics()).to.include(NS_BOOKMARKS_LEGACY);
      await openBookmarksList(p);
      await shows(p, 'Tea Room', async () => converse.diagnostics());
      expect(await shownNames(p)).to.deep.equal(['Tea Room']);
    });

    it('shows a bookmark another client publishes while Converse is open (a PEP notification)', async () => {
      const user = 'bm48-live';
      const phone = await otherClient(user);
      const tea = { jid: 'tea@conference.localhost', name: 'Tea Room', nick: 'al' };
      await publish(phone, NS_BOOKMARKS_LEGACY, storage48(tea), { id: 'current', publishOptions: BOOKMARK_OPTIONS });
      const p = await converseLogIn(user);
      await converseCapsVerified();
      await openBookmarksList(p);
      await shows(p, 'Tea Room', async () => converse.diagnostics());

      // The other client adds a room: XEP-0048 replaces the whole list (same item id, the newest wins).
      await publish(phone, NS_BOOKMARKS_LEGACY, storage48(tea, { jid: 'coffee@conference.localhost', name: 'Coffee Corner', nick: 'al' }), { id: 'current', publishOptions: BOOKMARK_OPTIONS });
      await shows(p, 'Coffee Corner', async () => converse.diagnostics());
      expect(await shownNames(p)).to.deep.equal(['Coffee Corner', 'Tea Room']);
    });
  });
});

async function waitFor(condition: () => boolean | Promise<boolean>, ms: number, why: () => string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(why());
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
