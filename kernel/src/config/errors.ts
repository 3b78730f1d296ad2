/**
 * A configuration error lists every problem found, each with the file, the line and column where it is,
 * the option path, what was expected and, where one is close, a did-you-mean.
 */
import { formatPath, type OptionIssue } from './option-spec.js';

export interface LocatedIssue extends OptionIssue {
  readonly line?: number;
  readonly column?: number;
}

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly issues: readonly LocatedIssue[],
  ) {
    super(ConfigError.render(file, issues));
    this.name = 'ConfigError';
  }

  static render(file: string, issues: readonly LocatedIssue[]): string {
    const lines = issues.map((i) => {
      const where = i.line !== undefined ? `${file}:${i.line}:${i.column ?? 1}` : file;
      return `  ${where}: ${i.path.length ? `${formatPath(i.path)}: ` : ''}${i.message}`;
    });
    return `invalid configuration (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${lines.join('\n')}`;
  }
}
