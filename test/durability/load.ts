/**
 * The write load of the crash test (crash.test.ts), and the ledger of what the server acknowledged.
 *
 * Four kinds of writes run concurrently against a server process until the test kills it:
 *   - registrations: POST /api/register as the admin; an HTTP 200 is the acknowledgement;
 *   - roster sets from logged-in clients (raw XMPP), a few in flight per client; the IQ result is the
 *     acknowledgement. Some sets change an item set before, so the stored version can be checked too;
 *   - chat messages to accounts that are offline, from clients that enabled stream management (XEP-0198),
 *     with an <r/> every few messages; an <a h='n'/> acknowledges the first n messages of that stream;
 *   - OAuth tokens: oauth_issue_token over /api, and the password grant on /oauth/token; a 200 is the
 *     acknowledgement.
 * Everything attempted is recorded before it is sent, and marked when (and only when) its acknowledgement
 * arrives, so that after the restart the test knows what must be there and what may be.
 */
import { randomBytes } from 'node:crypto';
import { RawXmppPeer } from '../support/raw-xmpp.js';

export const HOST = 'localhost';
export const ADMIN = 'admin@localhost:adminpass';
export const OAUTH_CLIENT = { id: 'crash-test', secret: 'crash-test-secret' };
/** The scope of every token the load obtains; api_permissions lets it run registered_vhosts. */
export const TOKEN_SCOPE = 'service:user';

export const basic = (credentials: string): string => `Basic ${Buffer.from(credentials).toString('base64')}`;
/** The password the test gives each pre-registered account. */
export const passwordOf = (user: string): string => `${user}-pw`;

export interface RosterVersion {
  readonly name: string;
  readonly groups: readonly string[];
  acked: boolean;
}

export interface SentMessage {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly body: string;
  acked: boolean;
  /** Seen by its recipient after a restart. */
  delivered: boolean;
}

export type Kind = 'registrations' | 'roster' | 'messages' | 'tokens';
export type Counts = Record<Kind, number>;
export const zero = (): Counts => ({ registrations: 0, roster: 0, messages: 0, tokens: 0 });

/** What was attempted and what was acknowledged, over every round. */
export class Ledger {
  readonly registrations = new Map<string, { password: string; acked: boolean }>();
  /** owner → contact → the versions set, in the order they were sent. */
  readonly roster = new Map<string, Map<string, RosterVersion[]>>();
  readonly messages = new Map<string, SentMessage>();
  /** Acknowledged tokens only: an unacknowledged one was never seen. */
  readonly tokens: Array<{ token: string; via: 'oauth_issue_token' | 'password grant' }> = [];
  /** Answers other than the acknowledgement while the server was up: a broken load, not a crash. */
  readonly failures: string[] = [];
}

export interface LoadPlan {
  readonly httpPort: number;
  readonly c2sPort: number;
  readonly round: number;
  /** Accounts whose clients change their rosters. */
  readonly rosterOwners: readonly string[];
  /** Accounts whose clients send offline messages with stream management. */
  readonly senders: readonly string[];
  /** Accounts that stay offline and receive the messages. */
  readonly recipients: readonly string[];
  /** Accounts tokens are issued for. */
  readonly tokenUsers: readonly string[];
}

const REGISTRATION_WORKERS = 3;
const ROSTER_WINDOW = 4;
const MESSAGE_WINDOW = 24;
const MESSAGES_PER_ACK_REQUEST = 4;
const BODY_BYTES = 600;

const NS_SM = 'urn:xmpp:sm:3';

/** Wakes whoever waits for the next thing that happens on a connection (data, close). */
class Signal {
  #waiters: Array<() => void> = [];
  wait(ms = 200): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  notify(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/**
 * Reads what the server sends on a logged-in raw peer (after STARTTLS, so on the TLS socket): `scan` gets
 * what arrived since its last complete match, and says how much of it it consumed; an element cut between
 * two chunks is seen whole with the next one.
 */
function listen(peer: RawXmppPeer, signal: Signal, scan: (text: string) => number): void {
  let buffer = '';
  const decoder = new TextDecoder('utf-8');
  peer.socket.on('data', (chunk: Buffer) => {
    buffer += decoder.decode(chunk, { stream: true });
    buffer = buffer.slice(scan(buffer));
    signal.notify();
  });
  peer.socket.on('close', () => signal.notify());
}

function attr(tag: string, name: string): string | undefined {
  return new RegExp(`\\b${name}=(?:'([^']*)'|"([^"]*)")`).exec(tag)?.slice(1).find((v) => v !== undefined);
}

export class Load {
  /** Acknowledgements received in this round. */
  readonly acks = zero();
  /** HTTP requests sent and not answered yet. */
  readonly #httpInFlight = zero();
  /** Per connection: writes sent and not acknowledged yet. */
  readonly #unanswered: Array<[Kind, () => number]> = [];
  #stopped = false;
  readonly #workers: Array<Promise<void>> = [];
  readonly #peers: RawXmppPeer[] = [];

  private constructor(
    private readonly ledger: Ledger,
    private readonly plan: LoadPlan,
  ) {}

  /** Logs the clients in (that is not part of the load), then starts every worker. */
  static async start(ledger: Ledger, plan: LoadPlan): Promise<Load> {
    const load = new Load(ledger, plan);
    const rosterPeers = await Promise.all(plan.rosterOwners.map((user) => load.#login(user, `roster-${plan.round}`)));
    const senderPeers = await Promise.all(plan.senders.map((user) => load.#login(user, `sender-${plan.round}`)));
    for (const peer of senderPeers) {
      peer.write(`<enable xmlns='${NS_SM}'/>`);
      await peer.waitFor(/<enabled\b/);
    }
    for (let w = 0; w < REGISTRATION_WORKERS; w++) load.#workers.push(load.#registrations(w));
    plan.rosterOwners.forEach((owner, i) => load.#workers.push(load.#roster(owner, rosterPeers[i]!)));
    plan.senders.forEach((sender, i) => load.#workers.push(load.#messages(sender, senderPeers[i]!)));
    load.#workers.push(load.#tokensByCommand(), load.#tokensByPasswordGrant());
    return load;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Writes sent and not acknowledged, now. */
  inFlight(): Counts {
    const counts = { ...this.#httpInFlight };
    for (const [kind, size] of this.#unanswered) counts[kind] += size();
    return counts;
  }

  /** No new writes from now on; what is in flight stays in flight. */
  stop(): void {
    this.#stopped = true;
  }

  /** Resolves once every worker has ended (after the kill, their connections fail). */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#workers);
    for (const peer of this.#peers) peer.destroy();
  }

  #fail(what: string): void {
    if (!this.#stopped) this.ledger.failures.push(`round ${this.plan.round}: ${what}`);
  }

  async #login(user: string, resource: string): Promise<RawXmppPeer> {
    const peer = await RawXmppPeer.connect(this.plan.c2sPort);
    this.#peers.push(peer);
    await peer.login(user, passwordOf(user), { resource });
    return peer;
  }

  #url(path: string): string {
    return `http://127.0.0.1:${this.plan.httpPort}${path}`;
  }

  /** One HTTP request of the load: the parsed body on 200, undefined otherwise (recorded as a failure unless stopped). */
  async #post(kind: Kind, what: string, path: string, init: { headers: Record<string, string>; body: string }): Promise<unknown> {
    this.#httpInFlight[kind]++;
    try {
      const res = await fetch(this.#url(path), { method: 'POST', ...init });
      const text = await res.text();
      if (res.status !== 200) {
        this.#fail(`${what}: HTTP ${res.status} ${text}`);
        return undefined;
      }
      return JSON.parse(text);
    } catch (err) {
      // The connection died: after the kill, that is what in-flight requests get.
      this.#fail(`${what}: ${(err as Error).message}`);
      return undefined;
    } finally {
      this.#httpInFlight[kind]--;
    }
  }

  async #registrations(worker: number): Promise<void> {
    for (let n = 0; !this.#stopped; n++) {
      const user = `reg-${this.plan.round}-${worker}-${n}`;
      const entry = { password: `${randomBytes(6).toString('hex')}-é`, acked: false };
      this.ledger.registrations.set(user, entry);
      const body = JSON.stringify({ user, host: HOST, password: entry.password });
      const answer = await this.#post('registrations', `register ${user}`, '/api/register', { headers: { authorization: basic(ADMIN), 'content-type': 'application/json' }, body });
      if (answer !== undefined) {
        entry.acked = true;
        this.acks.registrations++;
      }
    }
  }

  async #roster(owner: string, peer: RawXmppPeer): Promise<void> {
    const signal = new Signal();
    const pending = new Map<string, RosterVersion>();
    if (!this.ledger.roster.has(owner)) this.ledger.roster.set(owner, new Map());
    const mine = this.ledger.roster.get(owner)!;
    this.#unanswered.push(['roster', () => pending.size]);
    listen(peer, signal, (text) => {
      let end = 0;
      for (const match of text.matchAll(/<iq\b[^>]*>/g)) {
        end = match.index + match[0].length;
        const id = attr(match[0], 'id');
        const version = id === undefined ? undefined : pending.get(id);
        if (!version) continue; // a roster push, or something else
        pending.delete(id!);
        if (attr(match[0], 'type') === 'result') {
          version.acked = true;
          this.acks.roster++;
        } else this.#fail(`roster set ${id} of ${owner}: ${text.slice(match.index, match.index + 400)}`);
      }
      return end;
    });
    let seq = 0;
    const contacts: string[] = [];
    while (!this.#stopped && !peer.isClosed) {
      if (pending.size >= ROSTER_WINDOW) {
        await signal.wait();
        continue;
      }
      seq++;
      // Every third set changes an item set before (name and groups), the others add one.
      const contact = seq % 3 === 0 && contacts.length ? contacts[seq % contacts.length]! : `c${this.plan.round}-${seq}@${HOST}`;
      if (!mine.has(contact)) {
        mine.set(contact, []);
        contacts.push(contact);
      }
      const versions = mine.get(contact)!;
      const v = versions.length;
      const version: RosterVersion = { name: `Contact é ${this.plan.round}-${seq} v${v}`, groups: [`g${this.plan.round}-${seq}-v${v}-a`, `g${this.plan.round}-${seq}-v${v}-b`], acked: false };
      versions.push(version);
      const id = `rs-${this.plan.round}-${seq}`;
      pending.set(id, version);
      const groups = version.groups.map((g) => `<group>${g}</group>`).join('');
      peer.write(`<iq type='set' id='${id}'><query xmlns='jabber:iq:roster'><item jid='${contact}' name='${version.name}'>${groups}</item></query></iq>`);
    }
  }

  async #messages(sender: string, peer: RawXmppPeer): Promise<void> {
    const signal = new Signal();
    const sent: SentMessage[] = [];
    let handled = 0;
    this.#unanswered.push(['messages', () => sent.length - handled]);
    listen(peer, signal, (text) => {
      let end = 0;
      for (const match of text.matchAll(/<a\b[^>]*\/>|<message\b[^>]*type=['"]error['"][\s\S]*?<\/message>|<r\b[^>]*\/>/g)) {
        end = match.index + match[0].length;
        if (match[0].startsWith('<message')) {
          this.#fail(`a message of ${sender} bounced: ${match[0].slice(0, 400)}`);
          continue;
        }
        // The server's <r/> (it sent us something: only errors would be) needs no answer here.
        if (match[0].startsWith('<r')) continue;
        if (attr(match[0], 'xmlns') !== NS_SM) continue;
        const h = Number(attr(match[0], 'h'));
        // h counts the stanzas of this stream the server handled: only messages were sent after <enable/>.
        for (; handled < Math.min(h, sent.length); handled++) {
          sent[handled]!.acked = true;
          this.acks.messages++;
        }
      }
      return end;
    });
    let seq = 0;
    while (!this.#stopped && !peer.isClosed) {
      if (sent.length - handled >= MESSAGE_WINDOW) {
        await signal.wait();
        continue;
      }
      seq++;
      const to = `${this.plan.recipients[seq % this.plan.recipients.length]!}@${HOST}`;
      const id = `m-${this.plan.round}-${sender}-${seq}`;
      const message: SentMessage = { id, from: sender, to, body: `${id} ${randomBytes(BODY_BYTES / 2).toString('hex')}`, acked: false, delivered: false };
      this.ledger.messages.set(id, message);
      sent.push(message);
      peer.write(`<message to='${to}' type='chat' id='${id}'><body>${message.body}</body></message>`);
      if (seq % MESSAGES_PER_ACK_REQUEST === 0) peer.write(`<r xmlns='${NS_SM}'/>`);
    }
  }

  async #tokensByCommand(): Promise<void> {
    for (let n = 0; !this.#stopped; n++) {
      const user = this.plan.tokenUsers[n % this.plan.tokenUsers.length]!;
      const body = JSON.stringify({ jid: `${user}@${HOST}`, ttl: 3600, scopes: [TOKEN_SCOPE] });
      const answer = (await this.#post('tokens', `oauth_issue_token for ${user}`, '/api/oauth_issue_token', { headers: { authorization: basic(ADMIN), 'content-type': 'application/json' }, body })) as
        | { token?: string }
        | undefined;
      if (answer?.token) {
        this.ledger.tokens.push({ token: answer.token, via: 'oauth_issue_token' });
        this.acks.tokens++;
      }
    }
  }

  async #tokensByPasswordGrant(): Promise<void> {
    for (let n = 0; !this.#stopped; n++) {
      const user = this.plan.tokenUsers[n % this.plan.tokenUsers.length]!;
      const body = new URLSearchParams({ grant_type: 'password', username: `${user}@${HOST}`, password: passwordOf(user), scope: TOKEN_SCOPE }).toString();
      const headers = { authorization: basic(`${OAUTH_CLIENT.id}:${OAUTH_CLIENT.secret}`), 'content-type': 'application/x-www-form-urlencoded' };
      const answer = (await this.#post('tokens', `password grant for ${user}`, '/oauth/token', { headers, body })) as { access_token?: string } | undefined;
      if (answer?.access_token) {
        this.ledger.tokens.push({ token: answer.access_token, via: 'password grant' });
        this.acks.tokens++;
      }
    }
  }
}
