/**
 * A room's discussion history (XEP-0045 §7.2.15): the last `history_size` groupchat messages, stamped
 * with XEP-0203 delay as occupants got them, and the selection a joining client asks for with
 * <history maxchars maxstanzas seconds since/>. A room that archives (archive.ts) loads it from its
 * archive instead of its stored history.
 */
import { x, type XmlElement } from '@service/plugin-api';
import { NS_DELAY } from './ns.js';
import type { HistoryEntry, RoomArchiveEntry } from './types.js';

export interface HistoryRequest {
  readonly maxchars?: number;
  readonly maxstanzas?: number;
  readonly seconds?: number;
  readonly since?: number;
}

export class RoomHistory {
  #entries: HistoryEntry[] = [];

  constructor(private readonly size: number) {}

  get length(): number {
    return this.#entries.length;
  }

  entries(): HistoryEntry[] {
    return this.#entries.map((e) => ({ timestamp: e.timestamp, message: e.message.clone() }));
  }

  /** Keeps a message as broadcast (from room@service/nick), with a delay stamped from the room. */
  add(message: XmlElement, roomJid: string, timestamp: number): HistoryEntry | undefined {
    if (this.size <= 0) return undefined;
    const entry = { timestamp, message: stamped(message, roomJid, timestamp) };
    this.#entries.push(entry);
    if (this.#entries.length > this.size) this.#entries.shift();
    return entry;
  }

  restore(entries: readonly HistoryEntry[]): void {
    this.#entries = entries.slice(-Math.max(this.size, 0));
  }

  /** The history of a room that archives: its last archived messages, stamped as `add` stamps them. */
  restoreArchived(entries: readonly RoomArchiveEntry[], roomJid: string): void {
    this.restore(entries.map((e) => ({ timestamp: e.timestamp, message: stamped(e.message, roomJid, e.timestamp) })));
  }

  /** The messages a joining client asked for, oldest first; with no request, all of them. */
  select(request: HistoryRequest, now: number): XmlElement[] {
    let picked = this.#entries;
    if (request.seconds !== undefined) picked = picked.filter((e) => e.timestamp >= now - request.seconds! * 1000);
    if (request.since !== undefined) picked = picked.filter((e) => e.timestamp >= request.since!);
    if (request.maxstanzas !== undefined) picked = request.maxstanzas <= 0 ? [] : picked.slice(-request.maxstanzas);
    if (request.maxchars !== undefined) {
      const out: HistoryEntry[] = [];
      let chars = 0;
      for (let i = picked.length - 1; i >= 0; i--) {
        chars += picked[i]!.message.toString().length;
        if (chars > request.maxchars) break;
        out.unshift(picked[i]!);
      }
      picked = out;
    }
    return picked.map((e) => e.message.clone());
  }
}

/** A message as history keeps it: no `to`, and the room's XEP-0203 delay (any other delay removed). */
function stamped(message: XmlElement, roomJid: string, timestamp: number): XmlElement {
  const kept = message.clone();
  kept.removeChildren((c) => c.is('delay', NS_DELAY));
  delete kept.attrs.to;
  kept.append(x('delay', { xmlns: NS_DELAY, from: roomJid, stamp: new Date(timestamp).toISOString() }));
  return kept;
}

/** Reads <history/> of a join; bad numbers are ignored (the whole history is then sent, as without it). */
export function historyRequestOf(element: XmlElement | undefined): HistoryRequest {
  if (!element) return {};
  const int = (name: string) => {
    const text = element.attr(name);
    return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
  };
  const sinceText = element.attr('since');
  const since = sinceText !== undefined ? Date.parse(sinceText) : NaN;
  return { maxchars: int('maxchars'), maxstanzas: int('maxstanzas'), seconds: int('seconds'), since: Number.isNaN(since) ? undefined : since };
}
