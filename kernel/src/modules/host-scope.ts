/**
 * What a per-host module registers applies to its virtual host only. IQ handlers, disco entries and stream
 * features are scoped by their registries (they take the host); middleware and hooks are wrapped here: a layer
 * passes stanzas of other hosts straight on, a hook handler is not called for other hosts' accounts and
 * sessions. Hooks that concern no host (clear_cache, config_reloaded, rename_node) reach every instance.
 */
import type { C2SSession, HookName, HookRegistration, MiddlewareRegistration } from '@service/plugin-api';

/** The virtual host a hook's run is about, from its arguments (see HookMap), or undefined for none. */
function hostOfHook(hook: HookName, args: readonly unknown[]): string | undefined {
  switch (hook) {
    case 'register_user':
    case 'remove_user':
    case 'password_login_check':
    case 'c2s_auth_check':
      return args[1] as string;
    case 'c2s_auth_failed':
      return args[2] as string;
    case 'c2s_session_bound':
    case 'c2s_session_moved_in':
    case 'c2s_initial_presence':
    case 'c2s_presence_changed':
    case 'c2s_session_closed':
      return (args[0] as C2SSession).jid.host;
    default:
      return undefined;
  }
}

export function scopedHook(registration: HookRegistration, host: string): HookRegistration {
  const handler = registration.handler as (...args: unknown[]) => unknown;
  return {
    ...registration,
    handler: ((...args: unknown[]) => {
      const about = hostOfHook(registration.hook, args);
      return about === undefined || about === host ? handler(...args) : undefined;
    }) as never,
  };
}

export function scopedMiddleware(registration: MiddlewareRegistration, host: string): MiddlewareRegistration {
  const { chain, handler } = registration;
  const layer = handler as (ctx: never, next: () => Promise<void>) => Promise<void> | void;
  // The host a stanza belongs to on each chain: the sender's on the way out, the addressee's on the way in.
  const hostOf: (ctx: never) => string =
    chain === 'stream_in'
      ? (ctx: { account: { host: string } }) => ctx.account.host
      : chain === 'user_send'
        ? (ctx: { from: { host: string } }) => ctx.from.host
        : chain === 'user_receive'
          ? (ctx: { session: C2SSession }) => ctx.session.jid.host
          : (ctx: { to: { host: string } }) => ctx.to.host;
  return { ...registration, handler: ((ctx: never, next: () => Promise<void>) => (hostOf(ctx) === host ? layer(ctx, next) : next())) as never };
}
