/**
 * max_user_sessions with several worker processes (`workers: 2`, one `servicectl foreground` process): an
 * account's sessions are counted on every worker, so with one session on each worker a third is refused on
 * either of them. Which worker carries a connection is read from the login's log line (worker-logins.ts).
 */
import { expect } from 'chai';
import { freePort, spawnServer, type ServerProcess } from '../support/process.js';
import { RawXmppPeer } from '../support/raw-xmpp.js';
import { request } from '../support/server.js';
import { WorkerLogins, bothWorkersServe, twoWorkersConfig } from '../support/worker-logins.js';
import { next, stopAll, xml, type Client } from '../support/xmpp.js';

/** Sends chat messages from `from` to `jid` until one arrives at `to` (a worker learns of sessions elsewhere shortly after they bind). */
async function reach(from: Client, to: Client, jid: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const body = `hello ${attempt}`;
    const arrived = next(to, (s) => s.is('message') && s.getChildText('body') === body, 1000);
    await from.send(xml('message', { to: jid, type: 'chat' }, xml('body', {}, body)));
    try {
      await arrived;
      return;
    } catch (err) {
      if (attempt >= 10) throw err;
    }
  }
}

describe('max_user_sessions with several workers (workers: 2)', function () {
  this.timeout(120_000);
  let proc: ServerProcess;
  let c2s: number;
  const logins = new WorkerLogins(() => proc, () => c2s);

  before(async () => {
    c2s = await freePort();
    proc = await spawnServer((port) => {
      return twoWorkersConfig(port, c2s, { shaper_rules: { max_user_sessions: 2 } });
    });
    await bothWorkersServe(proc);
    const res = await request(`http://127.0.0.1:${proc.port}/api/register`, { method: 'POST', body: JSON.stringify({ user: 'alice', host: 'localhost', password: 'alice-pw' }) });
    expect(res.status, res.text).to.equal(200);
  });

  after(async () => {
    for (const peer of logins.peers) peer.destroy();
    await stopAll(...logins.clients);
    await proc?.cleanup();
  });

  it('counts the sessions of both workers, and refuses a third on either', async () => {
    const one = await logins.client(1, 'alice', 'one');
    const two = await logins.client(2, 'alice', 'two');
    // Each worker hears of the other's session a moment later: wait until they reach each other.
    await reach(one, two, 'alice@localhost/two');
    await reach(two, one, 'alice@localhost/one');
    const refusedOn = new Set<number>();
    for (let attempt = 0; attempt < 12 && refusedOn.size < 2; attempt++) {
      const from = proc.output().length;
      const peer = await RawXmppPeer.connect(c2s);
      logins.peers.push(peer);
      await peer.authenticate('alice', 'alice-pw');
      const worker = await logins.workerOf('alice', from);
      peer.write(`<iq type='set' id='bind1'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><resource>three</resource></bind></iq>`);
      const error = await peer.streamError(10_000);
      expect(error.condition, `a third session on worker ${worker}`).to.equal('policy-violation');
      expect(error.text).to.equal('too many sessions: alice@localhost may have 2 at once (max_user_sessions)');
      refusedOn.add(worker);
      peer.destroy();
    }
    expect([...refusedOn].sort()).to.deep.equal([1, 2]);
    // The two sessions are still there.
    await reach(two, one, 'alice@localhost/one');
  });
});
