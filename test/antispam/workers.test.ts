/**
 * mod_antispam under `workers: 2` (one `servicectl foreground` process): the spam filter cache and the blocked
 * domains are one for the whole server. A sender caught by the URL list on one worker is refused at once on
 * the other, the cache commands answered by either worker act on both, and so do the domain commands and
 * what a real-time block list publishes, whichever worker its notification reaches. Which
 * worker carries a session is read from the login's log line (test/support/worker-logins.ts).
 */
import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { join } from 'node:path';
import { freePort, spawnServer, type ServerProcess } from '../support/process.js';
import { WorkerLogins, bothWorkersServe, twoWorkersConfig } from '../support/worker-logins.js';
import { expectSilence, next, stopAll, xml, type Client, type Element } from '../support/xmpp.js';
import { body, chat, delivered, refused } from './helpers.js';

const SPAM_URL = 'https://cheap-pills.example/offer';

/** A command over HTTP on a new connection each time, so that consecutive calls meet both workers. */
function call(port: number, command: string, args: Record<string, unknown>): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: `/api/${command}`, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text || 'null') }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(args));
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('mod_antispam under workers: 2', function () {
  this.timeout(120_000);
  let proc: ServerProcess;
  let c2s: number;
  const logins = new WorkerLogins(() => proc, () => c2s);
  let alice: Client;
  let mallory1: Client; // mallory@localhost on worker 1
  let mallory2: Client; // mallory@localhost on worker 2
  const api = async (command: string, args: Record<string, unknown>) => {
    const res = await call(proc.port, command, args);
    expect(res.status, `${command}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body;
  };

  before(async () => {
    c2s = await freePort();
    proc = await spawnServer(
      (port, dir) => {
        return twoWorkersConfig(port, c2s, { modules: { mod_http_api: {}, mod_roster: {}, mod_presence: {}, mod_pubsub: {}, mod_antispam: { spam_urls_file: join(dir, 'urls.txt') } } });
      },
      undefined,
      (dir) => writeFile(join(dir, 'urls.txt'), `${SPAM_URL}\n`),
    );
    await bothWorkersServe(proc);
    for (const user of ['alice', 'mallory']) await api('register', { user, host: 'localhost', password: `${user}-pw` });
    alice = await logins.client(1, 'alice', 'desk');
    mallory1 = await logins.client(1, 'mallory', 'one');
    mallory2 = await logins.client(2, 'mallory', 'two');
    for (const client of [alice, mallory1, mallory2]) await client.send(xml('presence'));
    // Until worker 2 lists alice's session, it would not deliver to her: wait until a message gets through.
    const until = Date.now() + 10_000;
    for (let i = 0; ; i++) {
      try {
        await delivered(alice, mallory2, `warm-up ${i}`, 500);
        break;
      } catch (err) {
        if (Date.now() > until) throw new Error(`${(err as Error).message}\n${proc.output().split('\n').slice(-30).join('\n')}`);
      }
    }
  });
  after(async () => {
    await stopAll(...logins.clients);
    await proc?.cleanup();
  });

  it('refuses on worker 2 a sender caught on worker 1', async () => {
    await delivered(alice, mallory2, 'hello from worker 2');
    await refused(mallory1, `buy now ${SPAM_URL}`);
    const silence = expectSilence(alice, (s) => s.is('message') && body(s) === 'now from worker 2', 'the cached sender on the other worker');
    await refused(mallory2, 'now from worker 2');
    for (let i = 0; i < 4; i++) {
      const cache = await api('get_spam_filter_cache', { host: 'localhost' });
      expect(cache.map((e: any) => e.jid), `call ${i + 1}`).to.deep.equal(['mallory@localhost']);
    }
    // The probe: dropped from the cache (by whichever worker answers), mallory gets through on both workers.
    expect(await api('drop_from_spam_filter_cache', { host: 'localhost', jid: 'mallory@localhost' })).to.equal('mallory@localhost removed from cache');
    await silence.proveWith(() => mallory2.send(chat('alice@localhost', 'forgiven on 2')), (s) => s.is('message') && body(s) === 'forgiven on 2', 10_000);
    await delivered(alice, mallory1, 'forgiven on 1');
  });

  it('applies the cache and domain commands on both workers, whichever answers', async () => {
    expect(await api('add_to_spam_filter_cache', { host: 'localhost', jid: 'mallory@localhost' })).to.equal('mallory@localhost added to cache');
    await refused(mallory1, 'cached by command, 1');
    await refused(mallory2, 'cached by command, 2');
    await api('drop_from_spam_filter_cache', { host: 'localhost', jid: 'mallory@localhost' });
    expect(await api('add_blocked_domain', { host: 'localhost', domain: 'spam.example.net' })).to.equal('spam.example.net added to blocked domains');
    for (let i = 0; i < 4; i++) expect(await api('get_blocked_domains', { host: 'localhost' }), `call ${i + 1}`).to.deep.equal(['spam.example.net']);
    await api('remove_blocked_domain', { host: 'localhost', domain: 'spam.example.net' });
    for (let i = 0; i < 4; i++) expect(await api('get_blocked_domains', { host: 'localhost' }), `call ${i + 1}`).to.deep.equal([]);
    await delivered(alice, mallory1, 'all clear, 1');
    await delivered(alice, mallory2, 'all clear, 2');
  });

  it('blocks on both workers what a real-time block list publishes, whichever worker is notified', async () => {
    const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
    const pubsub = (child: ReturnType<typeof xml>) => alice.iqCaller.request(xml('iq', { type: 'set', to: 'pubsub.localhost' }, xml('pubsub', { xmlns: NS_PUBSUB }, child)));
    const item = (id: string) => xml('item', { id }, xml('report', { xmlns: 'urn:xmpp:reporting:1', reason: 'urn:xmpp:reporting:spam' }));
    await pubsub(xml('create', { node: 'spam_source_domains' }));
    await pubsub(xml('publish', { node: 'spam_source_domains' }, item('first.example')));
    const config = parse(await readFile(proc.configFile, 'utf8'));
    config.modules.mod_antispam.rtbl_services = [{ host: 'pubsub.localhost' }];
    await writeFile(proc.configFile, stringify(config));
    await api('reload_config', {});
    // reload_config reaches the other worker a moment later: each worker fetches the list and follows it
    // (one subscription, localhost/rtbl), which its log says.
    const followed = (worker: number) => proc.output().split('\n').some((l) => l.includes(`"worker":${worker},`) && l.includes('RTBL pubsub.localhost spam_source_domains followed for localhost'));
    const until = Date.now() + 10_000;
    while (!(followed(1) && followed(2))) {
      if (Date.now() > until) throw new Error('the workers did not both follow the list');
      await sleep(50);
    }
    for (let i = 0; i < 4; i++) expect(await api('get_blocked_domains', { host: 'localhost' }), `call ${i + 1}`).to.deep.equal(['first.example']);
    // alice's worker routes the notification of her publication; both workers block at once.
    await pubsub(xml('publish', { node: 'spam_source_domains' }, item('second.example')));
    for (let i = 0; i < 4; i++) expect(await api('get_blocked_domains', { host: 'localhost' }), `call ${i + 1}`).to.deep.equal(['first.example', 'second.example']);
    await pubsub(xml('retract', { node: 'spam_source_domains', notify: 'true' }, xml('item', { id: 'first.example' })));
    for (let i = 0; i < 4; i++) expect(await api('get_blocked_domains', { host: 'localhost' }), `call ${i + 1}`).to.deep.equal(['second.example']);
  });
});
