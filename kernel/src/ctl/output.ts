/**
 * How results print: strings raw, integers as numbers, lists one item per line, objects and lists of
 * objects as aligned columns. An ST result prints nothing (the exit status says it); `--json` prints the
 * exact JSON that /api returns instead.
 */
import type { ResultType, ValueType } from '@service/plugin-api';

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cell).join(',');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Rows of cells as columns separated by two spaces; the last column is not padded. */
function columns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  return rows.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length))).join('  ').trimEnd()).join('\n');
}

/** What servicectl prints for a result already shaped to its declaration (as /api would send it). */
export function formatCliOutput(result: unknown, type: ResultType): string {
  if (type === 'rescode') return '';
  if (type === 'restuple' || type === 'string' || type === 'integer' || type === 'boolean') return String(result);
  return formatValue(result, type);
}

function formatValue(value: unknown, type: ValueType): string {
  if (typeof type === 'string') return String(value);
  if ('list' in type) {
    const items = value as unknown[];
    const item = type.list;
    if (typeof item === 'object' && 'object' in item) {
      if (!items.length) return '';
      const names = item.object.map((f) => f.name);
      return columns([names, ...items.map((row) => names.map((n) => cell((row as Record<string, unknown>)[n])))]);
    }
    return items.map(cell).join('\n');
  }
  const record = value as Record<string, unknown>;
  return columns(type.object.map((f) => [f.name, cell(record[f.name])]));
}
