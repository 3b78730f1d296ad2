/**
 * Typed option declarations, shared by the server's top-level configuration and by every module's options.
 *
 * A spec is plain data: a module declares its options without calling anything, the server validates them
 * (with did-you-mean and the file's line) and generates their documentation. `InferOption` turns a spec into
 * the TypeScript type of the validated value, defaults applied.
 */

/** Where a value sits in the configuration: keys and list indexes from the top. */
export type OptionPath = readonly (string | number)[];

export type OptionSpec =
  | StringOption
  | IntegerOption
  | BooleanOption
  | EnumOption
  | ListOption
  | MapOption
  | ObjectOption
  | CustomOption<unknown>
  | AnyOption;

interface BaseOption {
  /** One or two sentences for the generated documentation. */
  doc: string;
  /** When true, a missing value is an error (and `default` is ignored). */
  required?: boolean;
}

export interface StringOption extends BaseOption {
  type: 'string';
  default?: string;
  /** A value must match; `patternDoc` says in words what is expected. */
  pattern?: RegExp;
  patternDoc?: string;
  nonEmpty?: boolean;
}

export interface IntegerOption extends BaseOption {
  type: 'integer';
  default?: number;
  min?: number;
  max?: number;
  /** Accept the word `infinity` (ejabberd's spelling of "no limit"), validated as `Infinity`. */
  infinity?: boolean;
}

export interface BooleanOption extends BaseOption {
  type: 'boolean';
  default?: boolean;
}

export interface EnumOption<V extends string = string> extends BaseOption {
  type: 'enum';
  values: readonly V[];
  default?: V;
}

export interface ListOption extends BaseOption {
  type: 'list';
  of: OptionSpec;
  default?: readonly unknown[];
  /** Accept a single value where a list is expected (ejabberd's "list or single"). */
  single?: boolean;
  nonEmpty?: boolean;
}

/** A map with operator-chosen keys (acl names, module names, paths). */
export interface MapOption extends BaseOption {
  type: 'map';
  values: OptionSpec;
  default?: Record<string, unknown>;
  /** Describes and checks the keys. */
  keyPattern?: RegExp;
  keyDoc?: string;
}

/** An object with a closed set of fields: an unknown field is an error with a did-you-mean. */
export interface ObjectOption extends BaseOption {
  type: 'object';
  fields: Readonly<Record<string, OptionSpec>>;
  default?: Record<string, unknown>;
}

/** A value parsed by code: ACL specs, access rules, listeners. `parse` throws `OptionIssues`. */
export interface CustomOption<T> extends BaseOption {
  type: 'custom';
  /** What is expected, in words, for error messages and docs ("an IP address with an optional /mask"). */
  expected: string;
  parse(value: unknown, path: OptionPath): T;
  default?: unknown;
}

export interface AnyOption extends BaseOption {
  type: 'any';
  default?: unknown;
}

export type OptionsSchema = Readonly<Record<string, OptionSpec>>;

// ---------------------------------------------------------------------------------------------
// Type inference

type Defaulted<S, T> = S extends { required: true } ? T : S extends { default: unknown } ? T : T | undefined;

export type InferValue<S> = S extends { type: 'string' }
  ? string
  : S extends { type: 'integer' }
    ? number
    : S extends { type: 'boolean' }
      ? boolean
      : S extends { type: 'enum'; values: readonly (infer V)[] }
        ? V
        : S extends { type: 'list'; of: infer O }
          ? InferValue<O>[]
          : S extends { type: 'map'; values: infer O }
            ? Record<string, InferValue<O>>
            : S extends { type: 'object'; fields: infer F }
              ? InferOptions<F>
              : S extends { type: 'custom'; parse(value: unknown, path: OptionPath): infer T }
                ? T
                : unknown;

export type InferOption<S> = Defaulted<S, InferValue<S>>;

export type InferOptions<F> = { -readonly [K in keyof F]: InferOption<F[K]> };
