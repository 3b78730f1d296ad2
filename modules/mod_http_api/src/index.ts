/**
 * mod_http_api: every loaded command over HTTP, as ejabberd's module of the same name.
 *
 *   POST /api/<command>   body: a JSON object of arguments ({} or nothing for none)
 *   GET  /api/<command>?arg=value   for commands whose arguments are all scalars
 *   POST /api/v2/<command>          the newest definition at or below API version 2
 *   GET  /api, /api/openapi.json    the OpenAPI 3.1 description of the loaded commands (openapi-route.ts)
 *
 * Success is 200 with the bare JSON result; every error is {"status":"error","code":…,"message":…}.
 */
import { CommandError, asCommandError, defineModule, jsonForm, readBodyText, sendCommandError, sendJson, type Caller, type HttpContext, type ServerServices } from '@service/plugin-api';
import { refuseForgedRequest } from './cross-site.js';
import { parseJsonArgs } from './json-args.js';
import { openApiTarget, serveOpenApi } from './openapi-route.js';

/** ejabberd's CORS headers, so browser tools written for it keep working. */
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization, X-Admin',
};
const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Max-Age': '86400',
};

const COMMAND_NAME = /^[a-z0-9_]{1,100}$/;
const VERSION_SEGMENT = /^v(\d{1,6})$/;

/** The version a mount path names in its last `vN` segment (`/api/v2`), remembered per mount. */
const mountVersions = new Map<string, number | undefined>();
function mountVersion(mount: string): number | undefined {
  if (mountVersions.has(mount)) return mountVersions.get(mount);
  const named = mount.split('/').reverse().map((s) => VERSION_SEGMENT.exec(s)).find(Boolean);
  const version = named ? Number(named[1]) : undefined;
  mountVersions.set(mount, version);
  return version;
}

/** The API version from the last `vN` segment of the mount path or right after it. */
function versionOf(mount: string, segments: readonly string[]): { version?: number; rest: readonly string[] } {
  const first = segments.length > 1 ? VERSION_SEGMENT.exec(segments[0]!) : null;
  if (first) return { version: Number(first[1]), rest: segments.slice(1) };
  return { version: mountVersion(mount), rest: segments };
}

function createHandler(services: ServerServices) {
  const { commands, httpAuth } = services;

  return async function handle(ctx: HttpContext): Promise<void> {
    ctx.set(CORS_HEADERS);
    try {
      if (ctx.method === 'OPTIONS') {
        ctx.set(PREFLIGHT_HEADERS);
        ctx.status = 200;
        ctx.type = 'text/plain';
        ctx.body = '';
        return;
      }
      const { version, rest } = versionOf(ctx.state.mount, ctx.state.segments);
      const openApi = ctx.method === 'GET' ? openApiTarget(ctx.state.mount, ctx.state.segments, version, rest) : undefined;
      if (openApi) return await serveOpenApi(ctx, services, openApi);
      if (rest.length === 0) throw new CommandError('bad_request', 'missing command name: call POST /api/<command> with a JSON object of arguments');
      const name = rest[0]!;
      if (rest.length > 1 || !COMMAND_NAME.test(name)) throw new CommandError('unknown_command', `unknown command ${rest.join('/').slice(0, 100)}`);
      if (ctx.method !== 'POST' && ctx.method !== 'GET') {
        ctx.set('Allow', 'GET, POST, OPTIONS');
        throw new CommandError('method_not_allowed', `method ${ctx.method} is not supported: use POST with a JSON body, or GET with query parameters`);
      }
      refuseForgedRequest(ctx);
      const credentials = await httpAuth.authenticate(ctx.get('authorization') || undefined, { ip: ctx.state.ip, way: 'http_api', connection: ctx.req.socket });
      const caller: Caller = {
        frontend: 'mod_http_api',
        tag: ctx.state.listener.tag,
        ip: ctx.state.ip,
        requestId: ctx.state.requestId,
        ...credentials,
      };
      let args: Array<[string, unknown]>;
      if (ctx.method === 'GET') {
        args = [...new URLSearchParams(ctx.querystring)];
        const command = commands.resolve(name, version);
        // Says which arguments the command takes: only to a caller who may run it (the bus checks first too).
        if (command) commands.authorize(command, caller);
        const structured = command?.decl.args.filter((a) => typeof a.type === 'object').map((a) => a.name) ?? [];
        if (structured.length) {
          throw new CommandError('bad_request', `${name} takes list or object arguments (${structured.join(', ')}): call it with POST and a JSON body`);
        }
      } else {
        // Read nowhere, query parameters on a POST would be dropped silently: say so, like any extra argument.
        const query = ctx.querystring ? [...new Set(new URLSearchParams(ctx.querystring).keys())] : [];
        if (query.length) {
          throw new CommandError('bad_request', `a POST takes its arguments in the JSON body, not in the query string (${query.join(', ')})`);
        }
        args = parseJsonArgs(await readBodyText(ctx, ctx.state.listener.max_body_size));
      }
      const result = await commands.execute(name, args, caller, { version });
      const decl = commands.resolve(name, version)?.decl;
      sendJson(ctx, decl ? jsonForm(decl.result.type, result) : result);
    } catch (err) {
      const error = asCommandError(err);
      if (!error) throw err;
      if (error.kind === 'unauthorized') ctx.set('WWW-Authenticate', httpAuth.challenge(ctx.get('authorization') || undefined));
      sendCommandError(ctx, error);
    }
  };
}

export default defineModule({
  name: 'mod_http_api',
  version: '0.1.0',
  pluginApi: '^0.1.0',
  summary: 'HTTP JSON API: every command at POST /api/<command>',
  frontends: ['mod_http_api'],
  doc:
    'Serves the command API over HTTP. Route it from a `service_http` listener with `request_handlers: {/api: mod_http_api}`. ' +
    'Authenticate with HTTP Basic (`user@host:password`) or an OAuth bearer token; without credentials a call is judged by its address. ' +
    'A `vN` path segment (`/api/v2/<command>`, or a handler mounted at `/api/v2`) selects API version N.',
  options: {},
  start(ctx) {
    return { httpHandlers: { mod_http_api: createHandler(ctx.services) } };
  },
});
