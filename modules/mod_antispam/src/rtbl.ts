/**
 * The real-time block lists (RTBL) of one virtual host: pubsub nodes whose item ids are blocked domains (or
 * their SHA-256), as xmppbl.org publishes them. With real XMPP stanzas from the host's own JID
 * `<host>/rtbl` (a resource of the domain this module serves through the router): it fetches each node's
 * items, subscribes to it, and then follows the event notifications — published items are blocked, retracted
 * ones unblocked, a purge or deletion empties the list. What it learns goes to the host's filter through
 * `update`, which also tells the other processes. A service that refuses or does not answer is logged and
 * asked again a minute later.
 */
import { randomUUID } from 'node:crypto';
import { Jid, x, type Logger, type RouterApi, type XmlElement } from '@service/plugin-api';
import type { RtblService } from './options.js';

export const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
export const NS_PUBSUB_EVENT = 'http://jabber.org/protocol/pubsub#event';
/** The resource of the host's JID that subscribes. */
export const RTBL_RESOURCE = 'rtbl';

const ANSWER_TIMEOUT_MS = 30_000;
const RETRY_MS = 60_000;

export type RtblUpdate = { replace?: string[]; add?: string[]; remove?: string[] };

/** How a service is named in the filter and in the logs. */
export const serviceKey = (service: RtblService) => `${service.host} ${service.node}`;

interface Pending {
  /** The service asked: only its answer counts (anyone may send an IQ result to `<host>/rtbl`). */
  readonly service: string;
  resolve(answer: XmlElement): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class RtblClient {
  readonly jid: string;
  readonly #pending = new Map<string, Pending>();
  readonly #retries = new Set<NodeJS.Timeout>();
  #counter = 0;
  #stopped = false;

  constructor(
    readonly host: string,
    private readonly services: readonly RtblService[],
    private readonly router: RouterApi,
    private readonly update: (service: string, change: RtblUpdate) => Promise<void>,
    private readonly logger: Logger,
  ) {
    this.jid = `${host}/${RTBL_RESOURCE}`;
  }

  /** Fetches and subscribes to every service, without waiting for the answers. */
  start(): void {
    for (const service of this.services) void this.#follow(service);
  }

  /** Stops the retries and forgets pending requests; unsubscribes when `unsubscribe` (this process is the last one). */
  async stop(unsubscribe: boolean): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#retries) clearTimeout(timer);
    this.#retries.clear();
    if (unsubscribe) {
      for (const service of this.services) {
        const payload = x('pubsub', { xmlns: NS_PUBSUB }, x('unsubscribe', { node: service.node, jid: this.jid }));
        await this.#send(service, 'set', payload, 2_000).catch(() => {});
      }
    }
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new Error('mod_antispam stopped'));
    }
    this.#pending.clear();
  }

  /**
   * What the router hands over for `<host>/rtbl`: answers to this client's requests, and event notifications
   * (resolved once the change is applied everywhere, so that the publisher's answer comes after).
   */
  async handle(stanza: XmlElement, from: Jid): Promise<void> {
    if (stanza.name === 'iq') {
      const type = stanza.attr('type');
      const id = stanza.attr('id');
      const pending = id !== undefined ? this.#pending.get(id) : undefined;
      if ((type === 'result' || type === 'error') && pending && from.bare === pending.service) {
        this.#pending.delete(id!);
        clearTimeout(pending.timer);
        pending.resolve(stanza);
      }
      return;
    }
    if (stanza.name !== 'message' || stanza.attr('type') === 'error') return;
    const event = stanza.getChild('event', NS_PUBSUB_EVENT);
    if (!event) return;
    for (const service of this.services) {
      if (from.bare !== service.host) continue;
      const change = eventChange(event, service.node);
      if (change) {
        this.logger.info({ host: this.host, service: serviceKey(service), ...countsOf(change) }, 'RTBL %s updated for %s', serviceKey(service), this.host);
        await this.update(serviceKey(service), change);
      }
    }
  }

  async #follow(service: RtblService): Promise<void> {
    if (this.#stopped) return;
    try {
      const items = await this.#send(service, 'get', x('pubsub', { xmlns: NS_PUBSUB }, x('items', { node: service.node })));
      this.#check(items, 'fetching the items');
      const listed = items.getChild('pubsub', NS_PUBSUB)?.getChild('items')?.getChildren('item') ?? [];
      const ids = listed.map((item) => item.attr('id')).filter((id): id is string => !!id);
      await this.update(serviceKey(service), { replace: ids });
      const subscribed = await this.#send(service, 'set', x('pubsub', { xmlns: NS_PUBSUB }, x('subscribe', { node: service.node, jid: this.jid })));
      this.#check(subscribed, 'subscribing');
      this.logger.info({ host: this.host, service: serviceKey(service), domains: ids.length }, 'RTBL %s followed for %s (%d items)', serviceKey(service), this.host, ids.length);
    } catch (err) {
      if (this.#stopped) return;
      this.logger.warn({ host: this.host, service: serviceKey(service), err: (err as Error).message }, 'RTBL %s: %s; trying again in 60 seconds', serviceKey(service), (err as Error).message);
      const timer = setTimeout(() => {
        this.#retries.delete(timer);
        void this.#follow(service);
      }, RETRY_MS);
      timer.unref();
      this.#retries.add(timer);
    }
  }

  #check(answer: XmlElement, doing: string): void {
    if (answer.attr('type') === 'result') return;
    const condition = answer.getChild('error')?.elements()[0]?.name ?? 'an error';
    throw new Error(`${doing} failed: ${condition}`);
  }

  #send(service: RtblService, type: 'get' | 'set', payload: XmlElement, ms = ANSWER_TIMEOUT_MS): Promise<XmlElement> {
    const id = `rtbl-${++this.#counter}-${randomUUID()}`;
    return new Promise<XmlElement>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${service.host} did not answer within ${ms / 1000} seconds`));
      }, ms);
      timer.unref();
      this.#pending.set(id, { service: service.host, resolve, reject, timer });
      this.router.route(x('iq', { type, id, from: this.jid, to: service.host }, payload)).catch((err: unknown) => {
        clearTimeout(timer);
        this.#pending.delete(id);
        reject(err as Error);
      });
    });
  }
}

/** What an event notification of `node` changes, or undefined when it is about another node or nothing. */
export function eventChange(event: XmlElement, node: string): RtblUpdate | undefined {
  const purge = event.getChild('purge');
  const deleted = event.getChild('delete');
  if (purge?.attr('node') === node || deleted?.attr('node') === node) return { replace: [] };
  const items = event.getChildren('items').filter((i) => i.attr('node') === node);
  if (!items.length) return undefined;
  const add: string[] = [];
  const remove: string[] = [];
  for (const group of items) {
    for (const item of group.getChildren('item')) if (item.attr('id')) add.push(item.attr('id')!);
    for (const retract of group.getChildren('retract')) if (retract.attr('id')) remove.push(retract.attr('id')!);
  }
  return add.length || remove.length ? { add, remove } : undefined;
}

function countsOf(change: RtblUpdate): Record<string, number> {
  return { replaced: change.replace?.length ?? -1, added: change.add?.length ?? 0, removed: change.remove?.length ?? 0 };
}
