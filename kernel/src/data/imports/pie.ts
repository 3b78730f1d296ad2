/**
 * Building blocks of the XEP-0227 document the importers of other servers' data produce: the namespaces,
 * the `<server-data>` root with its `<host>` and `<user>` elements, SCRAM credentials, a pubsub node
 * configuration form, and what an importer reports (converted users, and what it could not convert).
 */
import { XmlElement, x } from '@service/plugin-api';

export const NS_PIE = 'urn:xmpp:pie:0';
export const NS_PIE_SCRAM = 'urn:xmpp:pie:0#scram';
export const NS_CLIENT = 'jabber:client';
export const NS_ROSTER = 'jabber:iq:roster';
export const NS_VCARD = 'vcard-temp';
export const NS_PRIVATE = 'jabber:iq:private';
export const NS_DELAY = 'urn:xmpp:delay';
export const NS_PUBSUB = 'http://jabber.org/protocol/pubsub';
export const NS_PUBSUB_OWNER = 'http://jabber.org/protocol/pubsub#owner';
export const NS_DATA = 'jabber:x:data';

/** Something an importer read but could not put in the document, and why. */
export interface ConversionNote {
  readonly file: string;
  readonly reason: string;
}

/** An importer's result: the XEP-0227 document and what it left out. */
export interface Conversion {
  readonly document: XmlElement;
  /** Accounts put in the document. */
  readonly users: number;
  readonly notes: ConversionNote[];
}

/** `<server-data xmlns='urn:xmpp:pie:0'>` with one `<host>` per domain, in the order given. */
export class PieDocument {
  readonly root = new XmlElement('server-data', { xmlns: NS_PIE });
  readonly #hosts = new Map<string, XmlElement>();

  host(jid: string): XmlElement {
    let host = this.#hosts.get(jid);
    if (!host) {
      host = new XmlElement('host', { jid }, [], NS_PIE);
      this.#hosts.set(jid, host);
      this.root.append(host);
    }
    return host;
  }

  /** Adds a `<user>` to a host; `password` is the plaintext one when the old server kept it. */
  user(host: string, name: string, password?: string): XmlElement {
    const user = new XmlElement('user', password === undefined ? { name } : { name, password }, [], NS_PIE);
    this.host(host).append(user);
    return user;
  }

  get users(): number {
    let n = 0;
    for (const host of this.#hosts.values()) n += host.getChildren('user').length;
    return n;
  }
}

/** SCRAM keys as XEP-0227 carries them: base64 keys and salt, the iteration count, the mechanism by its hash. */
export function scramCredentials(hash: 'SHA-1' | 'SHA-256' | 'SHA-512', keys: { iterations: number; salt: Buffer; storedKey: Buffer; serverKey: Buffer }): XmlElement {
  return x(
    'scram-credentials',
    { xmlns: NS_PIE_SCRAM, mechanism: `SCRAM-${hash}` },
    x('iter-count', {}, String(keys.iterations)),
    x('salt', {}, keys.salt.toString('base64')),
    x('server-key', {}, keys.serverKey.toString('base64')),
    x('stored-key', {}, keys.storedKey.toString('base64')),
  );
}

/** A submitted pubsub#node_config form from option name → value (names without the `pubsub#` prefix). */
export function nodeConfigForm(options: ReadonlyArray<readonly [string, string | string[]]>): XmlElement {
  const form = x(
    'x',
    { xmlns: NS_DATA, type: 'submit' },
    x('field', { var: 'FORM_TYPE', type: 'hidden' }, x('value', {}, `${NS_PUBSUB}#node_config`)),
  );
  for (const [name, value] of options) {
    form.append(x('field', { var: `pubsub#${name}` }, ...(Array.isArray(value) ? value : [value]).map((v) => x('value', {}, v))));
  }
  return form;
}

/** An XEP-0082 date-time of a Unix time in seconds. */
export function stampOf(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
