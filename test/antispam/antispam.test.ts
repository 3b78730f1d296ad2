/**
 * mod_antispam on the real server with real clients. A second virtual host (`spam.example.com`) plays the
 * throwaway domain a spam wave comes from: its accounts write to accounts of `localhost`. Checked: the wave
 * is refused (sender told <policy-violation/>, nothing delivered, archived, stored offline or asked) and its senders
 * cached and refused at once afterwards, while a contact in the recipient's roster still gets through; a
 * listed URL inside a body; the cache and domain commands; a reload that meets a bad line keeps the lists in
 * force; the dump file; bad arguments. Each "nothing arrived" is proven by a probe along the same path.
 */
import { expect } from 'chai';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, ok } from '../support/admin-api.js';
import { TestServer } from '../support/server.js';
import { expectSilence, login, next, stopAll, xml, xmppConfig, type Client, type Element } from '../support/xmpp.js';
import { body, chat, bounced } from './helpers.js';

const SPAM_URL = 'https://cheap-pills.example/offer';

/** The error a sender gets back for `text` (by the body the bounce carries). */
const conditionOf = (error: Element) => error.getChild('error')?.children.find((c): c is Element => typeof c !== 'string')?.name;

describe('mod_antispam', function () {
  this.timeout(60_000);
  let t: TestServer;
  let dir: string;
  let alice: Client; // alice@localhost: the one being spammed
  let bob: Client; // bob@localhost: an ordinary local correspondent
  let s1: Client; // s1@spam.example.com: a spammer
  let s2: Client; // s2@spam.example.com: another spammer
  let friend: Client; // friend@spam.example.com: on the same domain, but in alice's roster

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'antispam-'));
    await writeFile(join(dir, 'domains.txt'), '# throwaway domains\nspam.example.com\n');
    await writeFile(join(dir, 'urls.txt'), `${SPAM_URL}\n`);
    await writeFile(join(dir, 'jids.txt'), 'known-spammer@elsewhere.example\n');
    await writeFile(join(dir, 'whitelist.txt'), '');
    const config = xmppConfig({
      mod_roster: {},
      mod_presence: {},
      mod_offline: {},
      mod_mam: {},
      mod_admin_extra: {},
      mod_antispam: {
        spam_domains_file: join(dir, 'domains.txt'),
        spam_urls_file: join(dir, 'urls.txt'),
        spam_jids_file: join(dir, 'jids.txt'),
        whitelist_domains_file: join(dir, 'whitelist.txt'),
        spam_dump_file: join(dir, 'dump', 'spam-@HOST@.log'),
        cache_size: 100,
      },
    });
    config.hosts = ['localhost', 'spam.example.com'];
    config.oauth_access = 'all';
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const [user, host] of [['alice', 'localhost'], ['bob', 'localhost'], ['carol', 'localhost'], ['s1', 'spam.example.com'], ['s2', 'spam.example.com'], ['friend', 'spam.example.com']] as const) {
      await t.register(user, host, `${user}-pw`);
    }
    alice = await login(t, { user: 'alice', password: 'alice-pw' });
    bob = await login(t, { user: 'bob', password: 'bob-pw' });
    s1 = await login(t, { user: 's1', password: 's1-pw', host: 'spam.example.com' });
    s2 = await login(t, { user: 's2', password: 's2-pw', host: 'spam.example.com' });
    friend = await login(t, { user: 'friend', password: 'friend-pw', host: 'spam.example.com' });
    for (const client of [alice, bob, s1, s2, friend]) await client.send(xml('presence'));
    // alice has friend@spam.example.com in her roster (no subscription needed: being a contact is enough).
    await alice.iqCaller.request(xml('iq', { type: 'set' }, xml('query', { xmlns: 'jabber:iq:roster' }, xml('item', { jid: 'friend@spam.example.com', name: 'Friend' }))));
  });
  after(async () => {
    await stopAll(alice, bob, s1, s2, friend);
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a spam wave from a throwaway domain and caches its sender; a contact in the roster still gets through', async () => {
    const silence = expectSilence(alice, (s) => s.is('message') && /^wave/.test(body(s) ?? ''), 'the spam wave');
    for (let i = 1; i <= 3; i++) {
      const error = bounced(s1, `wave ${i}`);
      await s1.send(chat('alice@localhost', `wave ${i}`));
      const answer = await error;
      expect(answer.attrs.from).to.equal('alice@localhost');
      expect(conditionOf(answer)).to.equal('policy-violation');
      expect(answer.getChild('error')!.getChildText('text')).to.equal('Your message is unsolicited');
    }
    // The probe: the same domain, the same recipient, but a contact of hers.
    const probe = await silence.proveWith(() => friend.send(chat('alice@localhost', 'hi from a friend')), (s) => s.is('message') && body(s) === 'hi from a friend');
    expect(probe.attrs.from).to.match(/^friend@spam\.example\.com\//);
    const cache: Array<{ jid: string; timestamp: number }> = await ok(t, 'get_spam_filter_cache', { host: 'localhost' });
    const entry = cache.find((e) => e.jid === 's1@spam.example.com');
    expect(entry, JSON.stringify(cache)).to.exist;
    expect(Math.abs(entry!.timestamp - Date.now() / 1000)).to.be.below(30);
    expect(cache.map((e) => e.jid)).to.not.include('friend@spam.example.com');
    // Archived: the friend's message, none of the wave.
    let archived = 0;
    for (let i = 0; i < 50 && archived < 1; i++) {
      archived = await ok(t, 'get_mam_count', { user: 'alice', host: 'localhost' });
      if (archived < 1) await new Promise((r) => setTimeout(r, 100));
    }
    expect(archived).to.equal(1);
  });

  it('refuses subscription requests from the throwaway domain', async () => {
    const silence = expectSilence(alice, (s) => s.is('presence') && s.attrs.type === 'subscribe', 'the spammer\'s subscription request');
    const error = next(s2, (s) => s.is('presence') && s.attrs.type === 'error');
    await s2.send(xml('presence', { to: 'alice@localhost', type: 'subscribe' }));
    expect(conditionOf(await error)).to.equal('policy-violation');
    // The probe: a subscription request along the same path, from bob (not listed), reaches her.
    await silence.proveWith(() => bob.send(xml('presence', { to: 'alice@localhost', type: 'subscribe' })), (s) => s.is('presence') && s.attrs.type === 'subscribe' && s.attrs.from === 'bob@localhost');
    expect((await ok(t, 'get_spam_filter_cache', { host: 'localhost' })).map((e: any) => e.jid)).to.include('s2@spam.example.com');
  });

  it('stores nothing offline for a refused message', async () => {
    await s1.send(chat('carol@localhost', 'offline wave'));
    await bounced(s1, 'offline wave');
    expect(await ok(t, 'get_offline_count', { user: 'carol', host: 'localhost' })).to.equal(0);
    // The same path stores an ordinary message.
    await bob.send(chat('carol@localhost', 'offline hello'));
    await bob.iqCaller.request(xml('iq', { type: 'get' }, xml('query', { xmlns: 'jabber:iq:roster' })));
    expect(await ok(t, 'get_offline_count', { user: 'carol', host: 'localhost' })).to.equal(1);
  });

  it('refuses a cached sender at once, even from a domain no longer blocked', async () => {
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal(['spam.example.com']);
    expect(await ok(t, 'remove_blocked_domain', { host: 'localhost', domain: 'spam.example.com' })).to.equal('spam.example.com removed from blocked domains');
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal([]);
    // s1 is cached: refused, without any list naming it now.
    const error = bounced(s1, 'still me');
    await s1.send(chat('alice@localhost', 'still me'));
    expect(conditionOf(await error)).to.equal('policy-violation');
    // Dropped from the cache, it gets through.
    expect(await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 's1@spam.example.com' })).to.equal('s1@spam.example.com removed from cache');
    expect(await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 's1@spam.example.com' })).to.equal("s1@spam.example.com wasn't cached");
    const arrived = next(alice, (s) => s.is('message') && body(s) === 'forgiven');
    await s1.send(chat('alice@localhost', 'forgiven'));
    await arrived;
    // Put into the cache by command, bob (a local account) is refused at once; expiring entries older than an hour keeps him.
    expect(await ok(t, 'add_to_spam_filter_cache', { host: 'localhost', jid: 'bob@localhost/phone' })).to.equal('bob@localhost added to cache');
    const refused = bounced(bob, 'from bob');
    await bob.send(chat('alice@localhost', 'from bob'));
    expect(conditionOf(await refused)).to.equal('policy-violation');
    expect(await ok(t, 'expire_spam_filter_cache', { host: 'localhost', seconds: 3600 })).to.equal('Expired 0 cache entries');
    expect((await ok(t, 'get_spam_filter_cache', { host: 'localhost' })).map((e: any) => e.jid)).to.include('bob@localhost');
    await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 'bob@localhost' });
    // add_blocked_domain blocks again, for a sender never cached.
    expect(await ok(t, 'add_blocked_domain', { host: 'global', domain: 'Spam.Example.COM' })).to.equal('spam.example.com added to blocked domains');
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal(['spam.example.com']);
    await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 's1@spam.example.com' });
    const again = bounced(s1, 'blocked again');
    await s1.send(chat('alice@localhost', 'blocked again'));
    expect(conditionOf(await again)).to.equal('policy-violation');
  });

  it('matches a listed URL inside a body, and caches its sender', async () => {
    const silence = expectSilence(alice, (s) => s.is('message') && (body(s) ?? '').includes('cheap-pills'), 'the message with the listed URL');
    const text = `Hello! Great deal at ${SPAM_URL}, today only`;
    const error = bounced(bob, text);
    await bob.send(chat('alice@localhost', text));
    expect(conditionOf(await error)).to.equal('policy-violation');
    // The probe: bob again, once dropped from the cache, with a URL that is not listed.
    await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 'bob@localhost' });
    await silence.proveWith(() => bob.send(chat('alice@localhost', 'see https://example.org/docs')), (s) => s.is('message') && body(s) === 'see https://example.org/docs');
  });

  it('writes each refusal to the dump file, one line with time, sender and reason, mode 0600', async () => {
    const file = join(dir, 'dump', 'spam-localhost.log');
    // The dump is written in the background: wait for the last refusal's line.
    let text = '';
    for (let i = 0; i < 50 && !text.includes('cheap-pills'); i++) {
      text = await readFile(file, 'utf8').catch(() => '');
      if (!text.includes('cheap-pills')) await new Promise((r) => setTimeout(r, 100));
    }
    const lines = text.trim().split('\n');
    const wave = lines.filter((l) => l.includes('s1@spam.example.com') && l.includes('alice@localhost'));
    expect(wave.length, text).to.be.at.least(3);
    const [time, from, to, reason] = wave[0]!.split('\t');
    expect(Number.isNaN(Date.parse(time!))).to.equal(false);
    expect(from).to.match(/^s1@spam\.example\.com\//);
    expect(to).to.equal('alice@localhost');
    expect(reason).to.equal('sender domain spam.example.com blocked');
    expect(lines.some((l) => l.endsWith(`listed URL ${SPAM_URL} in the body`))).to.equal(true);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
  });

  it('keeps the lists in force when a reload meets a bad line, and names the file and line', async () => {
    await writeFile(join(dir, 'urls.txt'), `${SPAM_URL}\nhttps://fine.example/\nnot a url\n`);
    const res = await api(t, 'reload_spam_filter_files', { host: 'localhost' });
    expect(res.status).to.equal(422);
    expect(res.body.message).to.contain(`${join(dir, 'urls.txt')}:3: 'not a url' is not an http or https URL`);
    await writeFile(join(dir, 'jids.txt'), 'not@a@jid\n');
    await writeFile(join(dir, 'urls.txt'), `${SPAM_URL}\n`);
    expect((await api(t, 'reload_spam_filter_files', { host: 'global' })).body.message).to.contain(`${join(dir, 'jids.txt')}:1:`);
    // The URL list in force still refuses.
    await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 'bob@localhost' });
    const error = bounced(bob, `again ${SPAM_URL}`);
    await bob.send(chat('alice@localhost', `again ${SPAM_URL}`));
    expect(conditionOf(await error)).to.equal('policy-violation');
    await ok(t, 'drop_from_spam_filter_cache', { host: 'localhost', jid: 'bob@localhost' });
    // A good file reloads (ST: 0), and a whitelisted domain then always passes, even cached.
    await writeFile(join(dir, 'jids.txt'), '');
    await writeFile(join(dir, 'whitelist.txt'), 'spam.example.com\n');
    expect(await ok(t, 'reload_spam_filter_files', { host: 'localhost' })).to.equal(0);
    await ok(t, 'add_to_spam_filter_cache', { host: 'localhost', jid: 's2@spam.example.com' });
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal([]);
    const arrived = next(alice, (s) => s.is('message') && body(s) === 'whitelisted now');
    await s2.send(chat('alice@localhost', 'whitelisted now'));
    await arrived;
  });

  it('answers bad arguments with 400 naming the problem, changing nothing', async () => {
    const before = await ok(t, 'get_spam_filter_cache', { host: 'localhost' });
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['get_blocked_domains', { host: 'nowhere.example' }, /'nowhere\.example' is not a virtual host served here/],
      ['add_blocked_domain', { host: 'localhost', domain: 'not a domain' }, /'not a domain' is not a domain/],
      ['add_blocked_domain', { host: 'localhost', domain: 'user@spam.example' }, /is not a domain/],
      ['add_to_spam_filter_cache', { host: 'localhost', jid: '@@' }, /'@@' is not a valid JID/],
      ['expire_spam_filter_cache', { host: 'localhost', seconds: -1 }, /seconds/],
      ['reload_spam_filter_files', { host: 'alice@localhost' }, /not a virtual host/],
    ];
    for (const [command, args, message] of cases) {
      const res = await api(t, command, args);
      expect(res.status, `${command} ${JSON.stringify(args)}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.message).to.match(message);
    }
    expect(await ok(t, 'get_spam_filter_cache', { host: 'localhost' })).to.deep.equal(before);
    expect(await ok(t, 'get_blocked_domains', { host: 'localhost' })).to.deep.equal([]);
  });

  it('offers its commands as OAuth scopes while it runs', async () => {
    const res = await api(t, 'oauth_issue_token', { jid: 'admin@localhost', ttl: 60, scopes: ['get_blocked_domains'] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.scopes).to.deep.equal(['get_blocked_domains']);
  });
});

describe('mod_antispam not enabled', function () {
  this.timeout(30_000);
  let t: TestServer;
  before(async () => {
    const config = xmppConfig({});
    config.oauth_access = 'all';
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
  });
  after(() => t?.stop());

  it('has no commands, and a token request for their scope gets invalid_scope', async () => {
    for (const command of ['get_blocked_domains', 'add_blocked_domain', 'reload_spam_filter_files', 'get_spam_filter_cache']) {
      const res = await api(t, command, { host: 'localhost', domain: 'spam.example' });
      expect(res.status, command).to.equal(404);
      const token = await api(t, 'oauth_issue_token', { jid: 'admin@localhost', ttl: 60, scopes: [command] });
      expect(token.body.message, command).to.match(new RegExp(`invalid_scope: '${command}' is not a scope of this server`));
    }
  });
});

describe('mod_antispam: cache_size and access_spam', function () {
  this.timeout(60_000);
  let t: TestServer;
  let dir: string;
  let spammers: Client[] = [];
  let alice: Client;
  let carol: Client;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'antispam-'));
    await writeFile(join(dir, 'urls.txt'), `${SPAM_URL}\n`);
    const config = xmppConfig({ mod_roster: {}, mod_presence: {}, mod_antispam: { spam_urls_file: join(dir, 'urls.txt'), cache_size: 2, access_spam: 'spam_welcome' } });
    (config.acl as Record<string, unknown>).spam_lovers = { user: 'carol@localhost' };
    config.access_rules = { spam_welcome: { allow: 'spam_lovers' } };
    t = await TestServer.start(config);
    await t.bootstrapAdmin();
    for (const user of ['alice', 'carol', 'm1', 'm2', 'm3']) await t.register(user, 'localhost', `${user}-pw`);
    alice = await login(t, { user: 'alice', password: 'alice-pw' });
    carol = await login(t, { user: 'carol', password: 'carol-pw' });
    for (const user of ['m1', 'm2', 'm3']) spammers.push(await login(t, { user, password: `${user}-pw` }));
    for (const client of [alice, carol, ...spammers]) await client.send(xml('presence'));
  });
  after(async () => {
    await stopAll(alice, carol, ...spammers);
    spammers = [];
    await t?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lets through to a recipient whom access_spam allows what it refuses to the others', async () => {
    const text = `for you: ${SPAM_URL}`;
    const arrived = next(carol, (s) => s.is('message') && body(s) === text);
    await spammers[0]!.send(chat('carol@localhost', text));
    await arrived;
    const error = bounced(spammers[0]!, `and you: ${SPAM_URL}`);
    await spammers[0]!.send(chat('alice@localhost', `and you: ${SPAM_URL}`));
    expect(conditionOf(await error)).to.equal('policy-violation');
  });

  it('keeps at most cache_size senders, forgetting those seen least recently', async () => {
    // m1 is cached (above); m2 then m3 are caught: the cache was full at m3, so it kept the newer half (m2) and m3.
    for (const [i, spammer] of [spammers[1]!, spammers[2]!].entries()) {
      await new Promise((r) => setTimeout(r, 1100)); // distinct seconds, so that "least recently" is defined
      const text = `wave ${i} ${SPAM_URL}`;
      const error = bounced(spammer, text);
      await spammer.send(chat('alice@localhost', text));
      await error;
    }
    const cache = await ok(t, 'get_spam_filter_cache', { host: 'localhost' });
    expect(cache.map((e: any) => e.jid)).to.deep.equal(['m2@localhost', 'm3@localhost']);
    // m1, forgotten, writes freely again.
    const arrived = next(alice, (s) => s.is('message') && body(s) === 'plain hello');
    await spammers[0]!.send(chat('alice@localhost', 'plain hello'));
    await arrived;
  });
});
