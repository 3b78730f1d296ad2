/**
 * The routes of one `service_http` listener: each `request_handlers` prefix mounted on an @koa/router router,
 * matched segment by segment (`/api` serves `/api` and `/api/…`, not `/apix`), case-sensitively, the longest
 * prefix first. A route dispatches to the handler registered under that name at the time of the request, so a
 * module that stops takes its routes with it while the port keeps listening. WebSocket upgrades, which never
 * reach koa, find their handler through the same router.
 */
import Router from '@koa/router';
import type { HttpState } from '@service/plugin-api';
import type { Context, Next } from 'koa';

export interface Mount {
  /** As configured, e.g. `/api`. */
  readonly prefix: string;
  /** The request handler's name: a module's, or one of the server's (service_oauth…). */
  readonly handler: string;
  readonly segments: readonly string[];
}

export type Dispatch = (ctx: Context & { state: HttpState }, mount: Mount) => Promise<void>;

export function splitPath(path: string): string[] {
  return path.split('/').filter(Boolean);
}

/** The segments of `path` below a mount of `depth` segments, percent-decoded (throws on bad encoding). */
export function segmentsBelow(path: string, depth: number): string[] {
  const segments = splitPath(path);
  if (depth) segments.splice(0, depth);
  for (let i = 0; i < segments.length; i++) if (segments[i]!.includes('%')) segments[i] = decodeURIComponent(segments[i]!);
  return segments;
}

/** path-to-regexp reads these characters as syntax; a configured prefix means them literally. */
function literal(segment: string): string {
  return segment.replace(/[:*?()[\]{}+!\\]/g, (c) => `\\${c}`);
}

/** Paths whose mount is kept at most, and the longest path kept (see mountFor). */
const RECENT_PATHS = 1024;
const RECENT_PATH_LENGTH = 256;

export class ListenerRoutes {
  readonly #router = new Router<HttpState>({ sensitive: true });
  readonly #mounts = new Map<string, Mount>();
  /** Recent paths and their mount; null: no mount serves the path. */
  readonly #recent = new Map<string, Mount | null>();
  readonly #dispatch: Dispatch;

  constructor(requestHandlers: Readonly<Record<string, string>>, dispatch: Dispatch) {
    this.#dispatch = dispatch;
    const mounts = Object.entries(requestHandlers)
      .map(([prefix, handler]) => ({ prefix, handler, segments: splitPath(prefix) }))
      .sort((a, b) => b.segments.length - a.segments.length);
    for (const mount of mounts) {
      this.#mounts.set(mount.prefix, mount);
      const base = mount.segments.map(literal).join('/');
      // One route per mount: the prefix itself, with or without a trailing slash, or anything below it. Every
      // route is a regular expression tried on each request, so one pattern rather than three. The route's own
      // middleware never runs: the router only matches (middleware() below).
      this.#router.all(mount.prefix, base ? `/${base}{/*rest}` : '{/*rest}', () => {});
    }
  }

  /**
   * Koa middleware: the mounted routes; a request no route takes goes on to `next`. The router matches the path;
   * its own middleware is not used: per request it read the Host header, copied captures and decoded params
   * nobody reads, and composed a chain of closures for the one route that matched, 7-10 µs of a `status`
   * request's 60 (docs/performance.md). A mount needs the longest matching prefix and nothing else.
   */
  middleware(): (ctx: Context, next: Next) => Promise<unknown> {
    return (ctx, next) => {
      const mount = this.mountFor(ctx.path);
      return mount ? this.#dispatch(ctx as never, mount) : next();
    };
  }

  /**
   * The mount that serves `path`: the longest prefix, as routes were added longest first. The router tries
   * every route's expression on each call, while most requests ask for one of a few paths (`/api/status`
   * again and again): the answers for recent paths are kept. Paths are the client's to choose, so only short
   * ones are kept, and all are dropped when RECENT_PATHS are held.
   */
  mountFor(path: string): Mount | undefined {
    let mount = this.#recent.get(path);
    if (mount === undefined) {
      const name = this.#router.match(path, 'GET').pathAndMethod[0]?.name;
      mount = (name === undefined ? undefined : this.#mounts.get(name)) ?? null;
      if (path.length <= RECENT_PATH_LENGTH) {
        if (this.#recent.size >= RECENT_PATHS) this.#recent.clear();
        this.#recent.set(path, mount);
      }
    }
    return mount ?? undefined;
  }
}
