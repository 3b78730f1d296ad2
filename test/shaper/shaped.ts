/**
 * What the shaper tests share: a server configuration with ejabberd's usual shaper rule (admins unshaped,
 * everyone else `normal`) on every listener, and a measurement of a client's throughput from outside: the
 * time its own messages take to come back through the server.
 */
import { type RawConfig } from '../support/server.js';
import { xml, xmppConfig, type Client } from '../support/xmpp.js';

/** Bytes per second of the `normal` shaper, and its burst: small, so that a measurement takes a few seconds. */
export const RATE = 10_000;
export const BURST = 10_000;
/** What a measured client sends. */
export const TOTAL = 50_000;

export function shapedConfig(rule: unknown = { none: 'admin', normal: 'all' }): RawConfig {
  const config = xmppConfig();
  config.shaper = { normal: { rate: RATE, burst_size: BURST }, fast: 50_000_000 };
  config.shaper_rules = { c2s_shaper: rule };
  const listen = config.listen as Array<Record<string, unknown>>;
  for (const listener of listen) listener.shaper = 'c2s_shaper';
  return config;
}

/**
 * Sends about `total` bytes of chat messages to the client's own JID and waits until every one has come
 * back: what the server read, at the rate it read it. Resolves with the bytes sent and the milliseconds taken.
 */
export async function echoThroughServer(xmpp: Client, total = TOTAL): Promise<{ bytes: number; ms: number }> {
  const self = xmpp.jid!.toString();
  const tag = `echo-${Math.random().toString(36).slice(2)}-`;
  const filler = 'x'.repeat(1000);
  const stanzas: ReturnType<typeof xml>[] = [];
  let bytes = 0;
  while (bytes < total) {
    const stanza = xml('message', { to: self, type: 'chat', id: `${tag}${stanzas.length}` }, xml('body', {}, filler));
    bytes += Buffer.byteLength(stanza.toString());
    stanzas.push(stanza);
  }
  let back = 0;
  const allBack = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${back} of ${stanzas.length} messages came back within 30 s`)), 30_000);
    const onStanza = (stanza: { name: string; attrs: Record<string, string> }) => {
      if (stanza.name !== 'message' || !stanza.attrs.id?.startsWith(tag)) return;
      if (++back < stanzas.length) return;
      clearTimeout(timer);
      xmpp.off('stanza', onStanza);
      resolve();
    };
    xmpp.on('stanza', onStanza);
  });
  const start = performance.now();
  for (const stanza of stanzas) await xmpp.send(stanza);
  await allBack;
  return { bytes, ms: performance.now() - start };
}

/** The time a client that used up to one burst before the measurement must take, at the least and at the most. */
export function shapedBounds(bytes: number): { min: number; max: number } {
  return { min: (((bytes - BURST) / RATE) * 1000) * 0.85, max: ((bytes / RATE) * 1000) * 1.6 + 1500 };
}
