/**
 * What the processes of a server with several workers say to each other.
 *
 *   - The primary and a worker talk over node:cluster's IPC channel: lifecycle (ready, peers, a worker gone,
 *     shut down) and the server actions every worker applies (reload_config, modules, log level…).
 *   - Workers talk to each other over their unix sockets (peer-socket.ts): the session directory, stanzas
 *     for each other's sessions, resumptions that move a session, cache invalidations and failed logins.
 */
import type { SessionAnnouncement, TakeMessage, TakenMessage } from '@service/plugin-api';
import type { LoginCounters, LoginEvent } from '../accounts/login-throttle.js';
import type { LogLevel } from '../log/logger.js';
import type { ChannelValue, ElementTree } from '@service/plugin-api';
import type { ChannelAnswer } from './channels.js';

/** What changes a process's state (not the database's), so every worker applies it when one does. */
export type ServerAction =
  | { readonly op: 'reload' }
  /** Modules installed, upgraded, removed or restarted: every worker brings its modules to the configuration. */
  | { readonly op: 'apply-modules'; readonly restart?: readonly string[] }
  | { readonly op: 'loglevel'; readonly level: LogLevel }
  | { readonly op: 'reopen-log' }
  | { readonly op: 'restart' }
  /** restore, load or delete_mnesia replaced stored data: drop what was read of it, end sessions of accounts gone. */
  | { readonly op: 'data-replaced'; readonly why: string };

/** Worker → primary. */
export type WorkerToPrimary =
  | { readonly t: 'ready' }
  /** Apply this on every other worker. */
  | { readonly t: 'action'; readonly action: ServerAction }
  /** stop (status 0) or halt (1) the whole server. */
  | { readonly t: 'exit'; readonly status: number }
  /** rotate_log: the primary rotates the file (one process renames it) and every worker reopens it. */
  | { readonly t: 'rotate-log' };

/** Primary → worker. */
export type PrimaryToWorker =
  /** The workers that are up (this one included): connect to those not connected yet. */
  | { readonly t: 'peers'; readonly peers: readonly number[] }
  /** A worker died: drop its sessions; `reap`: this worker tells their contacts (one worker does). */
  | { readonly t: 'peer-gone'; readonly index: number; readonly reap: boolean }
  | { readonly t: 'action'; readonly action: ServerAction }
  | { readonly t: 'shutdown' };

/** Worker → worker. */
export type PeerMessage =
  /** The first message on a connection: what follows comes from this worker, which (re)started. */
  | { readonly kind: 'hello'; readonly from: number }
  | { readonly kind: 'directory'; readonly event: SessionAnnouncement }
  | { readonly kind: 'deliver'; readonly to: string; readonly stanza: ElementTree }
  /** One stanza for several sessions of the receiving worker (the router's routeEach): routed there, a copy each. */
  | { readonly kind: 'route-each'; readonly recipients: readonly string[]; readonly stanza: ElementTree }
  | { readonly kind: 'send'; readonly to: string; readonly stanza: ElementTree }
  | { readonly kind: 'close'; readonly to: string; readonly condition: string; readonly text: string }
  | TakeMessage
  | TakenMessage
  | { readonly kind: 'invalidate'; readonly cache: string; readonly key?: string }
  /** A login failed (`failures` > 0) or succeeded here: every worker counts it (login-throttle.ts). */
  | ({ readonly kind: 'login' } & LoginEvent)
  /** The counts and bans of the sender, sent to a worker it (re)connects to: a restarted worker keeps the bans. */
  | { readonly kind: 'logins'; readonly counters: LoginCounters }
  /** A module's channel called from worker `from` (channels.ts); the answer comes back with the same id. */
  | { readonly kind: 'call'; readonly from: number; readonly id: number; readonly name: string; readonly payload: ChannelValue }
  | ({ readonly kind: 'answer'; readonly id: number } & ChannelAnswer);
