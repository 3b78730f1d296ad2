/**
 * An OpenAPI 3.1 description of the HTTP JSON API, generated from the loaded commands' declarations: one
 * `POST /<command>` per command (and a `GET` when every argument is a scalar), request and response
 * schemas from the argument and result types, the declared examples, and the error envelope every failure
 * shares. Commands that are command-line only are left out: /api refuses them.
 */
import { ERROR_KINDS } from '@service/plugin-api';
import type { ArgDecl, CommandDecl, FieldDecl, ResultType, ValueType } from '@service/plugin-api';
import type { CommandDoc } from '@service/plugin-api';
import { describeResultType, describeVersions, topicTags } from './command-facts.js';
import { commandExamples, wireResult } from './example-data.js';

export type JsonSchema = { readonly [key: string]: unknown };

export interface OpenApiInfo {
  readonly title?: string;
  /** The server's version. */
  readonly version: string;
  /** Where the operations' paths start, e.g. `/api` (relative to the document is fine). */
  readonly serverUrl: string;
}

/** HTTP statuses a command call can fail with (405 cannot happen on a documented method). */
const ERROR_STATUSES = [...new Set(Object.values(ERROR_KINDS).map((info) => info.http))].filter((status) => status !== 405).sort();

const ERROR_RESPONSES = Object.fromEntries(
  ERROR_STATUSES.map((status) => [
    String(status),
    {
      description: Object.entries(ERROR_KINDS)
        .filter(([, info]) => info.http === status)
        .map(([kind, info]) => `${kind} (code ${info.code}): ${info.doc}`)
        .join(' '),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    },
  ]),
);

const ERROR_REFS = Object.fromEntries(ERROR_STATUSES.map((status) => [String(status), { $ref: `#/components/responses/Error${status}` }]));

export function openApiDocument(docs: readonly CommandDoc[], info: OpenApiInfo): Record<string, unknown> {
  const callable = docs.filter((doc) => doc.loaded && !doc.decl.cliOnly);
  const paths: Record<string, unknown> = {};
  const names = new Set(callable.map((doc) => doc.decl.name));
  for (const doc of callable) {
    const decl = doc.decl;
    const item: Record<string, unknown> = { post: postOperation(doc) };
    if (decl.args.every((arg) => isScalar(arg.type))) item.get = getOperation(doc, getOperationId(decl.name, names));
    paths[`/${decl.name}`] = item;
  }
  const tags = [...new Set(callable.flatMap((doc) => topicTags(doc.decl)))].sort();
  return {
    openapi: '3.1.0',
    info: {
      title: info.title ?? 'Administration command API',
      version: info.version,
      description:
        'Every loaded command of this server. A call is `POST /<command>` with a JSON object of the arguments; ' +
        'success is 200 with the bare JSON result (ST results are the integer 0, or 1 for a "no"; RS results a string). ' +
        'A `vN` path segment before the command selects API version N. Authenticate with HTTP Basic (`user@host` and password) or an OAuth bearer token; ' +
        'without credentials a call is judged by its address. What each caller may run is set by `api_permissions`.',
    },
    servers: [{ url: info.serverUrl }],
    security: [{ basic: [] }, { bearer: [] }, {}],
    tags: tags.map((tag) => ({ name: tag })),
    paths,
    components: {
      securitySchemes: {
        basic: { type: 'http', scheme: 'basic', description: 'The account as user@host, and its password.' },
        bearer: { type: 'http', scheme: 'bearer', description: 'An OAuth access token.' },
      },
      schemas: {
        ErrorEnvelope: {
          type: 'object',
          description: 'The body of every failed call.',
          required: ['status', 'code', 'message'],
          additionalProperties: false,
          properties: {
            status: { const: 'error' },
            code: { type: 'integer', description: 'A stable code for the kind of failure (see the responses).' },
            message: { type: 'string', description: 'What went wrong, naming the argument, account or option at fault.' },
          },
        },
      },
      responses: Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([status, response]) => [`Error${status}`, response])),
    },
  };
}

/** The GET operation's id: `<command>_get`, unless another command already has that name. */
function getOperationId(name: string, names: ReadonlySet<string>): string {
  let id = `${name}_get`;
  while (names.has(id)) id = `${id}_`;
  return id;
}

function isScalar(type: ValueType): boolean {
  return typeof type === 'string';
}

function description(doc: CommandDoc): string | undefined {
  const decl = doc.decl;
  const versions = describeVersions(doc);
  const parts = [decl.longdesc, decl.note && `Note: ${decl.note}.`, versions && `API versions: ${versions}.`].filter(Boolean);
  return parts.length ? parts.join('\n\n') : undefined;
}

function operationBase(doc: CommandDoc, operationId: string): Record<string, unknown> {
  const decl = doc.decl;
  const base: Record<string, unknown> = { operationId, summary: decl.desc };
  const text = description(doc);
  if (text) base.description = text;
  const tags = topicTags(decl);
  if (tags.length) base.tags = tags;
  return base;
}

function postOperation(doc: CommandDoc): Record<string, unknown> {
  const decl = doc.decl;
  const examples = commandExamples(decl);
  const requestExamples = namedExamples(examples.map((e) => ({ summary: e.title, value: requestBody(decl, e.args) })));
  return {
    ...operationBase(doc, decl.name),
    requestBody: {
      // An empty body is taken as {}, so only commands with arguments need one.
      required: decl.args.length > 0,
      content: { 'application/json': { schema: argumentsSchema(decl), examples: requestExamples } },
    },
    responses: successResponse(decl, examples),
  };
}

function getOperation(doc: CommandDoc, operationId: string): Record<string, unknown> {
  const decl = doc.decl;
  return {
    ...operationBase(doc, operationId),
    parameters: decl.args.map((arg) => ({ name: arg.name, in: 'query', required: true, description: argDescription(arg), schema: valueSchema(arg.type) })),
    responses: successResponse(decl, commandExamples(decl)),
  };
}

function requestBody(decl: CommandDecl, args: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(decl.args.filter((arg) => arg.name in args).map((arg) => [arg.name, args[arg.name]]));
}

/** `examples` of a media type: example1, example2… */
function namedExamples(examples: ReadonlyArray<{ summary?: string; value: unknown }>): Record<string, unknown> {
  return Object.fromEntries(examples.map((e, i) => [`example${i + 1}`, e.summary ? { summary: e.summary, value: e.value } : { value: e.value }]));
}

function successResponse(decl: CommandDecl, examples: ReturnType<typeof commandExamples>): Record<string, unknown> {
  return {
    '200': {
      description: `${decl.result.name}: ${decl.result.desc ?? describeResultType(decl.result)}`,
      content: {
        'application/json': {
          schema: resultSchema(decl.result.type),
          examples: namedExamples(examples.map((e) => ({ summary: e.title, value: wireResult(decl, e.result) }))),
        },
      },
    },
    ...ERROR_REFS,
  };
}

function argumentsSchema(decl: CommandDecl): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(decl.args.map((arg) => [arg.name, { ...valueSchema(arg.type), description: argDescription(arg) }])),
    required: decl.args.map((arg) => arg.name),
    additionalProperties: false,
  };
}

/** The declared text, and the leniencies the schema's type cannot say. */
function argDescription(arg: ArgDecl): string {
  if (arg.type === 'integer') return `${arg.desc} (a numeric string such as "3" is accepted too)`;
  if (arg.type === 'boolean') return `${arg.desc} (the strings "true" and "false" are accepted too)`;
  if (typeof arg.type === 'object' && 'list' in arg.type && pairFields(arg.type.list)) {
    const [name, value] = pairFields(arg.type.list)!;
    return `${arg.desc} (also accepted as one object {"<${name.name}>": <${value.name}>, …})`;
  }
  return arg.desc;
}

/** The two fields of a {name, value} element type, which /api also takes as a JSON object. */
function pairFields(type: ValueType): readonly [FieldDecl, FieldDecl] | undefined {
  if (typeof type === 'object' && 'object' in type && type.object.length === 2 && type.object[0]!.type === 'string') {
    return [type.object[0]!, type.object[1]!];
  }
  return undefined;
}

/**
 * The JSON Schema of a value. Arguments (`input`) may give a list of {name, value} pairs as one object, as
 * /api accepts; results are exactly as declared.
 */
export function valueSchema(type: ValueType, input = true): JsonSchema {
  if (type === 'string' || type === 'integer' || type === 'boolean') return { type };
  if ('list' in type) {
    // A keyed result is one JSON object (see ListType.keyed).
    if (!input && type.keyed && pairFields(type.list)) return { type: 'object', additionalProperties: valueSchema(pairFields(type.list)![1].type, input) };
    const array = { type: 'array', items: valueSchema(type.list, input) };
    const pair = input ? pairFields(type.list) : undefined;
    return pair ? { oneOf: [array, { type: 'object', additionalProperties: valueSchema(pair[1].type, input) }] } : array;
  }
  const fieldSchema = (field: FieldDecl) => (field.desc ? { ...valueSchema(field.type, input), description: field.desc } : valueSchema(field.type, input));
  return {
    type: 'object',
    properties: Object.fromEntries(type.object.map((field) => [field.name, fieldSchema(field)])),
    required: type.object.map((field) => field.name),
    additionalProperties: false,
  };
}

function resultSchema(type: ResultType): JsonSchema {
  if (type === 'rescode') return { type: 'integer', enum: [0, 1], description: '0 on success, 1 for a "no"' };
  if (type === 'restuple') return { type: 'string' };
  return valueSchema(type, false);
}

/**
 * The commands as a call at API `version` sees them: each command's newest definition at or below it;
 * commands that only start after it are left out.
 */
export function docsAtVersion(docs: readonly CommandDoc[], version: number): CommandDoc[] {
  return docs.flatMap((doc) => {
    const definitions = [...doc.older, doc.decl];
    const index = definitions.findLastIndex((decl) => (decl.version ?? 0) <= version);
    if (index === -1) return [];
    return [{ ...doc, decl: definitions[index]!, older: definitions.slice(0, index) }];
  });
}
