/**
 * A command's examples in the four languages of ejabberd's documentation generator:
 *
 *   java     Apache XML-RPC client code
 *   perl     RPC::XML client code
 *   xmlrpc   the methodCall and methodResponse documents
 *   json     the HTTP exchange with /api: request line, JSON body, status line and the body /api answers
 *
 * XML-RPC, as ejabberd speaks it: the methodName is the command; the one param is a struct of the arguments;
 * the answer is a struct with one member named after the result. Values are typed from the declaration (an
 * integer written as "3" in an example is still an `<int>`). A list whose declaration names its element
 * (`item`) carries each element as a struct with one member of that name, as ejabberd does.
 */
import { badArgument } from '@service/plugin-api';
import type { CommandDecl, CommandExample, ResultType, ValueType } from '@service/plugin-api';
import { wireResult } from './example-data.js';

export const EXAMPLE_LANGUAGES = ['java', 'perl', 'xmlrpc', 'json'] as const;
export type ExampleLanguage = (typeof EXAMPLE_LANGUAGES)[number];

/** Where the generated client code points: ejabberd's customary XML-RPC port. */
const XMLRPC_URL = 'http://localhost:4560/';

export interface RenderedExample {
  readonly language: ExampleLanguage;
  /** The info string of a markdown code fence (syntax highlighting). */
  readonly syntax: string;
  readonly code: string;
}

/**
 * The `examples` argument of the gen_*_doc commands: a comma list of languages, blanks ignored, each once.
 * An empty list means no examples.
 */
export function parseExampleLanguages(list: string): ExampleLanguage[] {
  const out: ExampleLanguage[] = [];
  for (const word of list.split(',').map((w) => w.trim().toLowerCase())) {
    if (!word) continue;
    if (!(EXAMPLE_LANGUAGES as readonly string[]).includes(word)) {
      throw badArgument('examples', `unknown example language '${word}' in examples: expected a comma list of ${EXAMPLE_LANGUAGES.join(', ')}`);
    }
    if (!out.includes(word as ExampleLanguage)) out.push(word as ExampleLanguage);
  }
  return out;
}

export function renderExample(decl: CommandDecl, example: CommandExample, language: ExampleLanguage): RenderedExample {
  switch (language) {
    case 'java':
      return { language, syntax: 'java', code: javaExample(decl, example) };
    case 'perl':
      return { language, syntax: 'perl', code: perlExample(decl, example) };
    case 'xmlrpc':
      return { language, syntax: 'xml', code: xmlRpcExample(decl, example) };
    case 'json':
      return { language, syntax: 'http', code: jsonExample(decl, example) };
  }
}

// ---------------------------------------------------------------------------------------------
// Values as their declaration types them. Examples are hand-written, so a value of the wrong shape is
// rendered as best it can be rather than failing a whole document.

type Typed =
  | { kind: 'string'; value: string }
  | { kind: 'integer'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'list'; items: Typed[] }
  | { kind: 'struct'; members: Array<[string, Typed]> };

function typed(type: ValueType, value: unknown): Typed {
  if (type === 'string') return { kind: 'string', value: typeof value === 'string' ? value : JSON.stringify(value) ?? '' };
  if (type === 'integer') return { kind: 'integer', value: Number(value) };
  if (type === 'boolean') return { kind: 'boolean', value: value === true || value === 'true' };
  if ('list' in type) {
    const items = Array.isArray(value) ? value : [];
    return {
      kind: 'list',
      items: items.map((item) => {
        const element = typed(type.list, item);
        return type.item ? { kind: 'struct', members: [[type.item, element]] } : element;
      }),
    };
  }
  const record = value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  return { kind: 'struct', members: type.object.map((field) => [field.name, typed(field.type, record[field.name])]) };
}

function typedResult(type: ResultType, value: unknown): Typed {
  if (type === 'rescode') return { kind: 'integer', value: Number(value) };
  if (type === 'restuple') return { kind: 'string', value: String(value) };
  return typed(type, value);
}

function typedArgs(decl: CommandDecl, example: CommandExample): Typed {
  return { kind: 'struct', members: decl.args.map((arg) => [arg.name, typed(arg.type, example.args[arg.name])]) };
}

function typedResponse(decl: CommandDecl, example: CommandExample): Typed {
  return { kind: 'struct', members: [[decl.result.name, typedResult(decl.result.type, wireResult(decl, example.result))]] };
}

// ---------------------------------------------------------------------------------------------
// xmlrpc

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `<value>…</value>` lines at `indent`. */
function xmlValue(value: Typed, indent: string): string[] {
  const inner = `${indent}  `;
  switch (value.kind) {
    case 'string':
      return [`${indent}<value><string>${escapeXml(value.value)}</string></value>`];
    case 'integer':
      return [`${indent}<value><int>${value.value}</int></value>`];
    case 'boolean':
      return [`${indent}<value><boolean>${value.value ? 1 : 0}</boolean></value>`];
    case 'list':
      return [
        `${indent}<value>`,
        `${inner}<array>`,
        `${inner}  <data>`,
        ...value.items.flatMap((item) => xmlValue(item, `${inner}    `)),
        `${inner}  </data>`,
        `${inner}</array>`,
        `${indent}</value>`,
      ];
    case 'struct':
      return [`${indent}<value>`, ...xmlStruct(value.members, inner), `${indent}</value>`];
  }
}

function xmlStruct(members: ReadonlyArray<[string, Typed]>, indent: string): string[] {
  if (!members.length) return [`${indent}<struct/>`];
  return [
    `${indent}<struct>`,
    ...members.flatMap(([name, value]) => [
      `${indent}  <member>`,
      `${indent}    <name>${escapeXml(name)}</name>`,
      ...xmlValue(value, `${indent}    `),
      `${indent}  </member>`,
    ]),
    `${indent}</struct>`,
  ];
}

function xmlParams(value: Typed): string[] {
  return ['  <params>', '    <param>', ...xmlValue(value, '      '), '    </param>', '  </params>'];
}

function xmlRpcExample(decl: CommandDecl, example: CommandExample): string {
  return [
    '<?xml version="1.0"?>',
    '<methodCall>',
    `  <methodName>${escapeXml(decl.name)}</methodName>`,
    ...xmlParams(typedArgs(decl, example)),
    '</methodCall>',
    '',
    '<?xml version="1.0"?>',
    '<methodResponse>',
    ...xmlParams(typedResponse(decl, example)),
    '</methodResponse>',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// json: what goes over the wire to and from /api.

function jsonExample(decl: CommandDecl, example: CommandExample): string {
  const body = Object.fromEntries(decl.args.filter((arg) => arg.name in example.args).map((arg) => [arg.name, example.args[arg.name]]));
  return [
    `POST /api/${decl.name}`,
    'Content-Type: application/json',
    '',
    JSON.stringify(body, null, 2),
    '',
    'HTTP/1.1 200 OK',
    'Content-Type: application/json',
    '',
    // Byte for byte what /api sends: compact JSON of the shaped result.
    JSON.stringify(wireResult(decl, example.result)),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// java: Apache XML-RPC takes a Map for a struct and an Object[] for an array.

function javaString(text: string): string {
  return JSON.stringify(text).replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

function javaValue(value: Typed): string {
  switch (value.kind) {
    case 'string':
      return javaString(value.value);
    case 'integer':
      return String(value.value);
    case 'boolean':
      return String(value.value);
    case 'list':
      return value.items.length ? `new Object[] { ${value.items.map(javaValue).join(', ')} }` : 'new Object[0]';
    case 'struct': {
      const entries = value.members.map(([name, member]) => `${javaString(name)}, ${javaValue(member)}`);
      // Map.of takes at most ten pairs.
      if (entries.length <= 10) return `Map.of(${entries.join(', ')})`;
      return `Map.ofEntries(${value.members.map(([name, member]) => `Map.entry(${javaString(name)}, ${javaValue(member)})`).join(', ')})`;
    }
  }
}

function javaExample(decl: CommandDecl, example: CommandExample): string {
  const args = typedArgs(decl, example);
  const puts = args.kind === 'struct' ? args.members.map(([name, value]) => `args.put(${javaString(name)}, ${javaValue(value)});`) : [];
  return [
    'XmlRpcClientConfigImpl config = new XmlRpcClientConfigImpl();',
    `config.setServerURL(new URL(${javaString(XMLRPC_URL)}));`,
    'XmlRpcClient client = new XmlRpcClient();',
    'client.setConfig(config);',
    '',
    'Map<String, Object> args = new HashMap<>();',
    ...puts,
    `Object result = client.execute(${javaString(decl.name)}, new Object[] { args });`,
    `// result: ${javaValue(typedResponse(decl, example))}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// perl: RPC::XML would guess types from plain values ("007" becomes an int), so scalars are typed.

function perlString(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function perlKey(name: string): string {
  return /^[A-Za-z_]\w*$/.test(name) ? name : perlString(name);
}

/** A value to send: typed scalars, array and hash references for arrays and structs. */
function perlArgument(value: Typed, indent: string): string {
  switch (value.kind) {
    case 'string':
      return `RPC::XML::string->new(${perlString(value.value)})`;
    case 'integer':
      return `RPC::XML::int->new(${value.value})`;
    case 'boolean':
      return `RPC::XML::boolean->new(${value.value ? 1 : 0})`;
    case 'list':
      return `[${value.items.map((item) => perlArgument(item, indent)).join(', ')}]`;
    case 'struct':
      return perlHash(value.members.map(([name, member]) => [name, perlArgument(member, `${indent}    `)]), indent);
  }
}

/** A value as `$response->value` returns it: plain Perl data. */
function perlData(value: Typed): string {
  switch (value.kind) {
    case 'string':
      return perlString(value.value);
    case 'integer':
      return String(value.value);
    case 'boolean':
      return value.value ? '1' : '0';
    case 'list':
      return `[${value.items.map(perlData).join(', ')}]`;
    case 'struct':
      return `{ ${value.members.map(([name, member]) => `${perlKey(name)} => ${perlData(member)}`).join(', ')} }`;
  }
}

function perlHash(entries: ReadonlyArray<[string, string]>, indent: string): string {
  if (!entries.length) return '{}';
  return ['{', ...entries.map(([name, code]) => `${indent}    ${perlKey(name)} => ${code},`), `${indent}}`].join('\n');
}

function perlExample(decl: CommandDecl, example: CommandExample): string {
  return [
    'use RPC::XML;',
    'use RPC::XML::Client;',
    '',
    `my $client = RPC::XML::Client->new(${perlString(XMLRPC_URL)});`,
    `my $response = $client->send_request(${perlString(decl.name)}, ${perlArgument(typedArgs(decl, example), '')});`,
    'ref $response or die "$response\\n";',
    'die $response->string, "\\n" if $response->is_fault;',
    `# $response->value is ${perlData(typedResponse(decl, example))}`,
  ].join('\n');
}
