/**
 * The XML-RPC frontend (`service_xmlrpc`), with ejabberd's two call forms:
 *
 *   own data       one struct: user, server, token (or password), plus the command's arguments
 *   administrator  a first struct user, server, token (or password), admin: true; a second struct of arguments
 *
 * A single struct without credentials is an anonymous call, judged by address like HTTP. The result comes
 * back as a struct with one member named after the declared result; every failure is a fault whose code is
 * the error kind's stable code (docs/errors.md), never a dropped connection.
 */
import {
  CommandError,
  DEFAULT_LIMITS,
  ERROR_KINDS,
  asCommandError,
  readBodyText,
  type CommandDecl,
  type HttpContext,
  type HttpRequestHandler,
  type ResultDecl,
  type ServerServices,
  type ValueType,
} from '@service/plugin-api';
import { XmlRpcDecodeError, decodeMethodCall, encodeFault, encodeResponse, type XmlRpcValue } from './codec.js';

const CREDENTIAL_MEMBERS = ['user', 'server', 'token', 'password', 'admin'];

type Struct = Record<string, XmlRpcValue>;

function isStruct(value: XmlRpcValue | undefined): value is Struct {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) && !(value instanceof Date);
}

interface Credentials {
  readonly user: string;
  readonly server: string;
  readonly token?: string;
  readonly password?: string;
  readonly admin: boolean;
}

function credentialsOf(struct: Struct): Credentials | undefined {
  const { user, server, token, password, admin } = struct;
  if (token === undefined && password === undefined) return undefined;
  if (typeof user !== 'string' || typeof server !== 'string') {
    throw new CommandError('bad_request', 'credentials need the members user and server (strings) with token or password');
  }
  if ((token !== undefined && typeof token !== 'string') || (password !== undefined && typeof password !== 'string')) {
    throw new CommandError('bad_request', 'token and password must be strings');
  }
  return { user, server, token: token as string | undefined, password: password as string | undefined, admin: admin === true };
}

/** A list argument may arrive as ejabberd sends lists: each element a struct with one member named after the item. */
function unwrapItems(type: ValueType, value: XmlRpcValue): XmlRpcValue {
  if (typeof type !== 'object' || !('list' in type) || !Array.isArray(value)) return value;
  const item = type.item;
  return value.map((element) => {
    if (item && isStruct(element) && Object.keys(element).length === 1 && Object.hasOwn(element, item) && typeof type.list !== 'object') {
      return element[item]!;
    }
    return unwrapItems(type.list, element);
  });
}

/** The command's arguments from a struct: `server` stands for `host` (ejabberd's name for it). */
function argumentsOf(decl: CommandDecl, struct: Struct, skipCredentials: boolean): Array<[string, XmlRpcValue]> {
  const declared = new Map(decl.args.map((a) => [a.name, a]));
  const out: Array<[string, XmlRpcValue]> = [];
  for (const [name, value] of Object.entries(struct)) {
    if (skipCredentials && CREDENTIAL_MEMBERS.includes(name) && !declared.has(name)) {
      if (!(name === 'server' && declared.has('host') && !Object.hasOwn(struct, 'host'))) continue;
    }
    const target = name === 'server' && !declared.has('server') && declared.has('host') ? 'host' : name;
    const arg = declared.get(target);
    out.push([target, arg ? unwrapItems(arg.type, value) : value]);
  }
  return out;
}

/** The result as ejabberd encodes it: lists with a named item are lists of single-member structs. */
function encodeResult(result: ResultDecl, value: unknown): XmlRpcValue {
  const encode = (type: ResultDecl['type'] | ValueType, v: unknown): XmlRpcValue => {
    if (type === 'rescode' || type === 'restuple' || type === 'string' || type === 'integer' || type === 'boolean') return v as XmlRpcValue;
    if ('list' in type) {
      const items = v as unknown[];
      return items.map((item) => (type.item && typeof type.list !== 'object' ? { [type.item]: item as XmlRpcValue } : encode(type.list, item)));
    }
    const record = v as Record<string, unknown>;
    return Object.fromEntries(type.object.map((f) => [f.name, encode(f.type, record[f.name])]));
  };
  return { [result.name]: encode(result.type, value) };
}

export function createXmlRpcHandler(services: ServerServices): HttpRequestHandler {
  const { commands, httpAuth } = services;
  return async (ctx: HttpContext) => {
    ctx.type = 'text/xml; charset=utf-8';
    const fault = (kind: keyof typeof ERROR_KINDS, message: string, status = 200) => {
      ctx.status = status;
      ctx.body = encodeFault(ERROR_KINDS[kind].code, message);
    };
    if (ctx.method !== 'POST') {
      ctx.set('Allow', 'POST');
      return fault('method_not_allowed', `XML-RPC calls are POST requests, not ${ctx.method}`, 405);
    }
    try {
      const text = await readBodyText(ctx, ctx.state.listener.max_body_size);
      const call = decodeMethodCall(text, { maxStanzaSize: ctx.state.listener.max_body_size, maxDepth: DEFAULT_LIMITS.maxDepth });
      const decl = commands.resolve(call.method)?.decl ?? (await commands.unknown(call.method));
      const structs = call.params;
      if (structs.some((p) => !isStruct(p)) || structs.length > 2) {
        throw new CommandError('bad_request', 'expected one struct of arguments, or a struct of credentials then a struct of arguments');
      }
      const first = structs[0] as Struct | undefined;
      const second = structs[1] as Struct | undefined;
      const credentials = first ? credentialsOf(first) : undefined;
      if (second && !credentials) throw new CommandError('bad_request', 'with two structs, the first holds the credentials: user, server and token or password');
      const args = second ? argumentsOf(decl, second, false) : first ? argumentsOf(decl, first, credentials !== undefined) : [];
      let account: { user: string; host: string } | undefined;
      let oauth: { scopes: readonly string[]; tokenId: string } | undefined;
      if (credentials) {
        const credential = credentials.password !== undefined ? { password: credentials.password } : { token: credentials.token! };
        const authenticated = await httpAuth.authenticateParts(credentials.user, credentials.server, credential, { ip: ctx.state.ip, way: 'xmlrpc', connection: ctx.req.socket });
        account = authenticated.account;
        oauth = authenticated.oauth;
      }
      const result = await commands.execute(call.method, args, {
        frontend: 'service_xmlrpc',
        tag: ctx.state.listener.tag,
        ip: ctx.state.ip,
        requestId: ctx.state.requestId,
        account,
        oauth,
        actingAsAdmin: credentials?.admin === true,
        // The own-data form acts on the caller's own account whatever the credentials: acting for others
        // takes the admin flag, also with a service:admin token.
        ownAccountOnly: account !== undefined && credentials?.admin !== true,
      });
      ctx.status = 200;
      ctx.body = encodeResponse(encodeResult(decl.result, result));
    } catch (err) {
      if (err instanceof XmlRpcDecodeError) return fault('bad_request', err.message);
      const error = asCommandError(err);
      if (!error) throw err;
      // The fault says it all; a refused login also says when to come back, as HTTP does.
      if (error.retryAfter !== undefined) ctx.set('Retry-After', String(error.retryAfter));
      fault(error.kind, error.message, error.kind === 'too_large' ? 413 : 200);
    }
  };
}
