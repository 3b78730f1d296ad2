/**
 * Named hooks with priorities, after ejabberd's and Prosody's: the server runs a hook at a point of interest
 * ("an account was removed") and every module that joined it reacts. Lower priority numbers run first. A
 * handler may return `HOOK_STOP` to end the run.
 *
 * Hook names and their argument types are declared by augmenting `HookMap`:
 *
 *   declare module '@service/plugin-api' { interface HookMap { my_event: [jid: string] } }
 */
import type { C2SSession } from '../xmpp/session.js';

export interface HookMap {
  /** An account was created. */
  register_user: [user: string, host: string];
  /**
   * An account is being removed: every module deletes what it stores for it. Runs after the
   * authentication record is gone, so the account can no longer log in while its data is cleared.
   */
  remove_user: [user: string, host: string];
  /** The `clear_cache` command: drop every cache. */
  clear_cache: [];
  /**
   * A cache of this node dropped an entry (`key`), or every entry (`key` undefined): a cluster module tells
   * the other nodes, which drop it with CachesApi.invalidateLocal. Not run for what other nodes report.
   */
  cache_invalidated: [cache: string, key: string | undefined];
  /** The configuration was reloaded and applied. */
  config_reloaded: [];
  /** mnesia_change: stored data of node `from` now belongs to node `to` (the server is stopped). */
  rename_node: [from: string, to: string];
  /**
   * A node of the cluster this node saw alive died or left: what it owned (NodesApi.owner) goes to the next
   * node that asks, which rebuilds it from storage; a module tells its local users what they lost there.
   * Runs on every node that saw it.
   */
  cluster_node_down: [node: string];
  /** A client bound a resource: the session is registered and can receive stanzas. */
  c2s_session_bound: [session: C2SSession];
  /**
   * A session moved here from another node (stream management resumed it here): registered, its modules'
   * state restored, its client about to get what it had not acknowledged. Not a new session: bound hooks
   * do not run again.
   */
  c2s_session_moved_in: [session: C2SSession];
  /** A session sent its initial presence (offline messages are delivered then). */
  c2s_initial_presence: [session: C2SSession];
  /** A session changed its broadcast presence (initial, updated, or unavailable). */
  c2s_presence_changed: [session: C2SSession];
  /** A session is over: unregistered already; modules clean up (presence unavailable, last activity…). */
  c2s_session_closed: [session: C2SSession];
  /** Authentication failed from an address (fail2ban counts these). */
  c2s_auth_failed: [ip: string, user: string | undefined, host: string, mechanism: string];
  /**
   * About to let an account in (SASL succeeded): a handler throws a SaslFailure to refuse
   * (a banned account, a blocked address).
   */
  c2s_auth_check: [user: string, host: string, ip: string];
  /**
   * A password was verified for an account (HTTP Basic, XML-RPC, OAuth's password forms, SASL PLAIN,
   * check_password): a handler throws to refuse the login although the password is right (a banned
   * account). The account service then answers "wrong credentials". Names are normalized.
   */
  password_login_check: [user: string, host: string];
}

export type HookName = keyof HookMap;
export const HOOK_STOP = Symbol('hook.stop');
export type HookResult = void | typeof HOOK_STOP;
export type HookHandler<N extends HookName> = (...args: HookMap[N]) => HookResult | Promise<HookResult>;

/** A module's hook handler; a union over hook names, so `handler` is typed by `hook`. */
export type HookRegistration = {
  [N in HookName]: {
    readonly hook: N;
    readonly handler: HookHandler<N>;
    /** Default 50; lower runs first. */
    readonly priority?: number;
  };
}[HookName];

/** Running hooks and joining them outside a module's static registrations (a handler added for a while). */
export interface HooksApi {
  /**
   * Adds a handler; `owner` (the module's name) takes it away when the module stops, and the returned
   * function removes it sooner.
   */
  add<N extends HookName>(hook: N, handler: HookHandler<N>, priority?: number, owner?: string): () => void;
  run<N extends HookName>(hook: N, ...args: HookMap[N]): Promise<void>;
}
