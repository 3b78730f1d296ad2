/**
 * mod_offline's part of XEP-0227 exports and imports: an account's queue as `<offline-messages>` (in the
 * XEP-0227 namespace), each message as it arrived plus the server's XEP-0203 `<delay/>` saying when it was
 * stored, which is how ejabberd writes them too. On import that delay (the one from the host itself) gives
 * the storage time back and is removed, since delivery adds it again. An expiry time (XEP-0079), which
 * XEP-0227 cannot say, rides in an `<expires xmlns='urn:service:piefxis:offline:0'/>` child.
 */
import { PortabilityError, accountKey, x, type AccountPortability, type XmlElement } from '@service/plugin-api';
import { NS_DELAY } from './delivery.js';
import type { NewMessage, OfflineStore } from './store.js';

export const NS_PIE = 'urn:xmpp:pie:0';
export const NS_OFFLINE_STATE = 'urn:service:piefxis:offline:0';
const NS_CLIENT = 'jabber:client';

function exported(stanza: XmlElement, host: string, createdAt: number, expiresAt: number | undefined): XmlElement {
  const message = stanza.clone();
  // A message built on the server (send_message) may carry no namespace of its own: it is a client stanza.
  if (message.ns !== NS_CLIENT) {
    message.ns = NS_CLIENT;
    message.setAttr('xmlns', NS_CLIENT);
  }
  if (!message.getChildren('delay', NS_DELAY).some((d) => d.attr('from') === host)) {
    message.append(x('delay', { xmlns: NS_DELAY, from: host, stamp: new Date(createdAt).toISOString() }, 'Offline Storage'));
  }
  if (expiresAt !== undefined) message.append(x('expires', { xmlns: NS_OFFLINE_STATE, stamp: new Date(expiresAt).toISOString() }));
  return message;
}

function stampOf(element: XmlElement | undefined, what: string): number | undefined {
  const stamp = element?.attr('stamp');
  if (stamp === undefined) return undefined;
  const time = Date.parse(stamp);
  if (Number.isNaN(time)) throw new PortabilityError(`offline: the ${what} stamp '${stamp}' is not a date`);
  return time;
}

/** The messages to store; a PortabilityError names a bad one. */
function messagesOf(host: string, lists: readonly XmlElement[], now: number): NewMessage[] {
  const messages: NewMessage[] = [];
  for (const list of lists) {
    for (const element of list.elements()) {
      if (!element.is('message', NS_CLIENT)) throw new PortabilityError(`offline: <${element.local}/> in ${element.ns ?? 'no namespace'} is not a <message xmlns='${NS_CLIENT}'/>`);
      const stanza = element.clone();
      const delay = stanza.getChildren('delay', NS_DELAY).find((d) => d.attr('from') === host);
      const expires = stanza.getChild('expires', NS_OFFLINE_STATE);
      const createdAt = stampOf(delay, 'delay') ?? now;
      const expiresAt = stampOf(expires, 'expiry');
      stanza.removeChildren((c) => c === delay || c === expires);
      messages.push({ from: stanza.attr('from') ?? host, stanza, createdAt, expiresAt });
    }
  }
  return messages;
}

export function offlinePortability(store: OfflineStore): AccountPortability {
  return {
    kind: 'offline',
    claims: [{ name: 'offline-messages', ns: NS_PIE }],
    async exportAccount(user, host) {
      const messages = await store.list(accountKey(user, host), Date.now());
      if (!messages.length) return [];
      return [x('offline-messages', { xmlns: NS_PIE }, ...messages.map((m) => exported(m.stanza, host, m.createdAt, m.expiresAt)))];
    },
    checkAccount(_user, host, elements) {
      messagesOf(host, elements, Date.now());
    },
    async importAccount(user, host, elements) {
      const messages = messagesOf(host, elements, Date.now());
      const account = accountKey(user, host);
      for (const message of messages) await store.add(account, message);
      return messages.length;
    },
  };
}
