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

/** Where a request path goes: its mount, and the path's segments below it. */
export interface Route {
  readonly mount: Mount;
  /** Percent-decoded; undefined when the path is not valid percent-encoded UTF-8. */
  readonly segments: readonly string[] | undefined;
}

export type Dispatch = (ctx: Context & { state: HttpState }, route: Route) => Promise<void>;

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

/** The segments of `path` below `mount`, frozen (routes are shared by requests); undefined when badly encoded. */
function decodedBelow(path: string, mount: Mount): readonly string[] | undefined {
  try {
    return Object.freeze(segmentsBelow(path, mount.segments.length));
  } catch {
    return undefined;
  }
}

/** path-to-regexp reads these characters as syntax; a configured prefix means them literally. */
function literal(segment: string): string {
  return segment.replace(/[:*?()[\]{}+!\\]/g, (c) => `\\${c}`);
}

/** Paths whose route is kept at most, and the longest path kept (see routeFor). */
const RECENT_PATHS = 1024;
const RECENT_PATH_LENGTH = 256;

export class ListenerRoutes {
  readonly #router = new Router<HttpState>({ sensitive: true });
  readonly #mounts = new Map<string, Mount>();
  /** Recent paths and their route; null: no mount serves the path. */
  readonly #recent = new Map<string, Route | null>();
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
      const route = this.routeFor(ctx.path);
      return route ? this.#dispatch(ctx as never, route) : next();
    };
  }

  /** The mount that serves `path`: the longest prefix, as routes were added longest first. */
  mountFor(path: string): Mount | undefined {
    return this.routeFor(path)?.mount;
  }

  /**
   * The route of `path`. The router tries every route's expression on each call, and the segments are split
   * and decoded again, while most requests ask for one of a few paths (`/api/status` again and again): the
   * routes of recent paths are kept. Paths are the client's to choose, so only short ones are kept, and all
   * are dropped when RECENT_PATHS are held.
   */
  routeFor(path: string): Route | undefined {
    let route = this.#recent.get(path);
    if (route === undefined) {
      const name = this.#router.match(path, 'GET').pathAndMethod[0]?.name;
      const mount = name === undefined ? undefined : this.#mounts.get(name);
      route = mount ? { mount, segments: decodedBelow(path, mount) } : null;
      if (path.length <= RECENT_PATH_LENGTH) {
        if (this.#recent.size >= RECENT_PATHS) this.#recent.clear();
        this.#recent.set(path, route);
      }
    }
    return route ?? undefined;
  }
}
