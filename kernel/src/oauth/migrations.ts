/**
 * OAuth storage: tokens (only a SHA-256 of each token is stored, with a public id for listing and
 * revoking) and registered clients (a password client's secret is stored as a scrypt hash).
 */
import { sqlClientOf, type Migration } from '@service/plugin-api';

export const TOKENS_TABLE = 'oauth_tokens';
export const CLIENTS_TABLE = 'oauth_clients';
export const MODELS_TABLE = 'oauth_models';

export const OAUTH_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_tokens',
    up: (knex) =>
      knex.schema
        .createTable(TOKENS_TABLE, (t) => {
          t.string('token_hash', 64).notNullable().primary();
          t.string('id', 32).notNullable().unique();
          t.string('kind', 32).notNullable();
          t.string('username', 191).nullable();
          t.string('host', 191).nullable();
          t.string('client_id', 191).nullable();
          t.text('scope').notNullable();
          t.bigInteger('created_at').notNullable();
          t.bigInteger('expires_at').notNullable();
          t.bigInteger('last_used_at').nullable();
          t.string('grant_id', 64).nullable();
          // The model as oidc-provider keeps it, for tokens its flows issue.
          t.text('payload').nullable();
          t.index(['expires_at']);
          t.index(['host', 'username']);
          t.index(['grant_id']);
        })
        .createTable(CLIENTS_TABLE, (t) => {
          t.string('client_id', 191).notNullable().primary();
          t.string('client_name', 191).notNullable();
          t.string('grant_type', 32).notNullable();
          t.text('redirect_uri').nullable();
          t.text('secret_hash').nullable();
          t.bigInteger('created_at').notNullable();
        })
        .createTable(MODELS_TABLE, (t) => {
          // oidc-provider's other models (sessions, interactions, grants, authorization codes…).
          t.string('model', 40).notNullable();
          t.string('id_hash', 64).notNullable();
          t.text('payload').notNullable();
          t.bigInteger('expires_at').nullable();
          t.string('grant_id', 64).nullable();
          t.string('uid', 191).nullable();
          t.primary(['model', 'id_hash']);
          t.index(['uid']);
          t.index(['grant_id']);
          t.index(['expires_at']);
        }),
  },
  {
    // Whose each model is, so that removing an account ends its sign-in sessions and grants, and removing a
    // client its codes and grants. Rows written before have none; they expire within the refresh lifetime,
    // and the authorization server checks the account on every issuance anyway.
    id: '002_model_owners',
    up: (knex) =>
      knex.schema.alterTable(MODELS_TABLE, (t) => {
        t.string('username', 191).nullable();
        t.string('host', 191).nullable();
        t.string('client_id', 191).nullable();
        t.index(['host', 'username']);
        t.index(['client_id']);
      }),
  },
  {
    // Keys compared byte for byte on MySQL/MariaDB too, as on SQLite and PostgreSQL. Under the database's
    // default collation (*_ci, PAD SPACE) 'WebApp' and 'webapp ' were the client 'webapp': its secret
    // authenticated them, a second client of that name was refused, and a token's public id in other letters
    // revoked that token. The other databases already compare exactly: nothing to do there.
    id: '003_exact_keys_on_mysql',
    up: (knex) => {
      if (sqlClientOf(knex) !== 'mysql2') return knex.schema;
      let schema = knex.schema;
      for (const table of [TOKENS_TABLE, CLIENTS_TABLE, MODELS_TABLE]) {
        schema = schema.raw(`alter table \`${table}\` convert to character set utf8mb4 collate utf8mb4_bin`);
      }
      return schema;
    },
  },
];
