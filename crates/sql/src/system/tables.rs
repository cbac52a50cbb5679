//! The virtual tables: their columns and how their rows are made from a
//! [`Snapshot`].

use super::snapshot::{
    hash_buckets, ConKind, RelKind, Snapshot, TableRel, AM_BTREE, AM_HASH, AM_HEAP, DATABASE, PG_CATALOG,
};
use super::types::{self, oid_of, TYPES};
use super::{stats, Identity};
use crate::catalog::RefAction;
use crate::catalog::{is_hidden_column, OutputColumn};
use crate::functions::array_text;
use crate::privileges::ObjectKind;
use centum_types::{DataType, Value};

/// Column types of the virtual tables. Centum has no `name` or `"char"`
/// type: those are `text`, and so are the catalogs' arrays, in
/// PostgreSQL's array syntax.
#[derive(Clone, Copy)]
enum Ty {
    /// An OID (`oid`).
    O,
    /// `name`, `"char"`, `text` and arrays rendered as text.
    T,
    /// `int2vector`.
    V2,
    /// `oidvector`.
    VO,
    B,
    I2,
    I4,
    I8,
    F,
    Ts,
}

impl Ty {
    fn data_type(self) -> DataType {
        match self {
            Ty::O => DataType::Oid,
            Ty::I4 => DataType::Integer,
            Ty::V2 => DataType::Int2Vector,
            Ty::VO => DataType::OidVector,
            Ty::T => DataType::Text,
            Ty::B => DataType::Boolean,
            Ty::I2 => DataType::SmallInt,
            Ty::I8 => DataType::BigInt,
            Ty::F => DataType::Double,
            Ty::Ts => DataType::TimestampTz,
        }
    }
}

use Ty::{B, F, I2, I4, I8, O, T, V2, VO};

/// The OID `pg_proc.prolang` reports for PL/pgSQL.
const PLPGSQL: i32 = 13_573;

macro_rules! system_tables {
    ($($variant:ident $schema:literal $name:literal [$($col:literal $ty:expr),* $(,)?])*) => {
        /// A virtual catalog table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum SystemTable { $($variant),* }

        impl SystemTable {
            /// Every virtual table.
            pub const ALL: &'static [SystemTable] = &[$(SystemTable::$variant),*];

            /// (schema, name).
            pub fn name(self) -> (&'static str, &'static str) {
                match self { $(SystemTable::$variant => ($schema, $name)),* }
            }

            fn spec(self) -> &'static [(&'static str, Ty)] {
                match self { $(SystemTable::$variant => &[$(($col, $ty)),*]),* }
            }
        }
    };
}

system_tables! {
    Namespace "pg_catalog" "pg_namespace" ["oid" O, "nspname" T, "nspowner" O, "nspacl" T]
    Class "pg_catalog" "pg_class" [
        "oid" O, "relname" T, "relnamespace" O, "reltype" O, "reloftype" O, "relowner" O, "relam" O,
        "relfilenode" O, "reltablespace" O, "relpages" I4, "reltuples" F, "relallvisible" I4,
        "reltoastrelid" O, "relhasindex" B, "relisshared" B, "relpersistence" T, "relkind" T,
        "relnatts" I2, "relchecks" I2, "relhasrules" B, "relhastriggers" B, "relhassubclass" B,
        "relrowsecurity" B, "relforcerowsecurity" B, "relispopulated" B, "relreplident" T,
        "relispartition" B, "relrewrite" O, "relacl" T, "reloptions" T, "relpartbound" T,
        "relfrozenxid" T, "relminmxid" T,
    ]
    Attribute "pg_catalog" "pg_attribute" [
        "attrelid" O, "attname" T, "atttypid" O, "attstattarget" I4, "attlen" I2, "attnum" I2,
        "attndims" I4, "attcacheoff" I4, "atttypmod" I4, "attbyval" B, "attalign" T, "attstorage" T,
        "attcompression" T, "attnotnull" B, "atthasdef" B, "atthasmissing" B, "attidentity" T,
        "attgenerated" T, "attisdropped" B, "attislocal" B, "attinhcount" I4, "attcollation" O,
        "attacl" T, "attoptions" T, "attfdwoptions" T, "attmissingval" T,
    ]
    Type "pg_catalog" "pg_type" [
        "oid" O, "typname" T, "typnamespace" O, "typowner" O, "typlen" I2, "typbyval" B, "typtype" T,
        "typcategory" T, "typispreferred" B, "typisdefined" B, "typdelim" T, "typrelid" O,
        "typsubscript" T, "typelem" O, "typarray" O, "typinput" T, "typoutput" T, "typreceive" T,
        "typsend" T, "typalign" T, "typstorage" T, "typnotnull" B, "typbasetype" O, "typtypmod" I4,
        "typndims" I4, "typcollation" O, "typdefault" T, "typacl" T,
    ]
    Index "pg_catalog" "pg_index" [
        "indexrelid" O, "indrelid" O, "indnatts" I2, "indnkeyatts" I2, "indisunique" B,
        "indnullsnotdistinct" B, "indisprimary" B, "indisexclusion" B, "indimmediate" B,
        "indisclustered" B, "indisvalid" B, "indcheckxmin" B, "indisready" B, "indislive" B,
        "indisreplident" B, "indkey" V2, "indcollation" VO, "indclass" VO, "indoption" V2,
        "indexprs" T, "indpred" T,
    ]
    Constraint "pg_catalog" "pg_constraint" [
        "oid" O, "conname" T, "connamespace" O, "contype" T, "condeferrable" B, "condeferred" B,
        "convalidated" B, "conrelid" O, "contypid" O, "conindid" O, "conparentid" O, "confrelid" O,
        "confupdtype" T, "confdeltype" T, "confmatchtype" T, "conislocal" B, "coninhcount" I4,
        "connoinherit" B, "conkey" T, "confkey" T, "conbin" T,
    ]
    Attrdef "pg_catalog" "pg_attrdef" ["oid" O, "adrelid" O, "adnum" I2, "adbin" T]
    Am "pg_catalog" "pg_am" ["oid" O, "amname" T, "amhandler" T, "amtype" T]
    Database "pg_catalog" "pg_database" [
        "oid" O, "datname" T, "datdba" O, "encoding" I4, "datlocprovider" T, "datistemplate" B,
        "datallowconn" B, "datconnlimit" I4, "datfrozenxid" T, "datminmxid" T, "dattablespace" O,
        "datcollate" T, "datctype" T, "daticulocale" T, "datcollversion" T, "datacl" T,
    ]
    Roles "pg_catalog" "pg_roles" [
        "rolname" T, "rolsuper" B, "rolinherit" B, "rolcreaterole" B, "rolcreatedb" B,
        "rolcanlogin" B, "rolreplication" B, "rolconnlimit" I4, "rolpassword" T, "rolvaliduntil" Ty::Ts,
        "rolbypassrls" B, "rolconfig" T, "oid" O,
    ]
    Authid "pg_catalog" "pg_authid" [
        "oid" O, "rolname" T, "rolsuper" B, "rolinherit" B, "rolcreaterole" B, "rolcreatedb" B,
        "rolcanlogin" B, "rolreplication" B, "rolbypassrls" B, "rolconnlimit" I4, "rolpassword" T,
        "rolvaliduntil" Ty::Ts,
    ]
    User "pg_catalog" "pg_user" [
        "usename" T, "usesysid" O, "usecreatedb" B, "usesuper" B, "userepl" B, "usebypassrls" B,
        "passwd" T, "valuntil" Ty::Ts, "useconfig" T,
    ]
    AuthMembers "pg_catalog" "pg_auth_members" ["roleid" O, "member" O, "grantor" O, "admin_option" B]
    StatActivity "pg_catalog" "pg_stat_activity" [
        "datid" O, "datname" T, "pid" I4, "leader_pid" I4, "usesysid" O, "usename" T, "application_name" T,
        "client_addr" T, "client_hostname" T, "client_port" I4, "backend_start" Ty::Ts, "xact_start" Ty::Ts,
        "query_start" Ty::Ts, "state_change" Ty::Ts, "wait_event_type" T, "wait_event" T, "state" T,
        "backend_xid" T, "backend_xmin" T, "query_id" I8, "query" T, "backend_type" T,
    ]
    Settings "pg_catalog" "pg_settings" [
        "name" T, "setting" T, "unit" T, "category" T, "short_desc" T, "extra_desc" T, "context" T,
        "vartype" T, "source" T, "min_val" T, "max_val" T, "enumvals" T, "boot_val" T, "reset_val" T,
        "sourcefile" T, "sourceline" I4, "pending_restart" B,
    ]
    Description "pg_catalog" "pg_description" ["objoid" O, "classoid" O, "objsubid" I4, "description" T]
    Inherits "pg_catalog" "pg_inherits" ["inhrelid" O, "inhparent" O, "inhseqno" I4, "inhdetachpending" B]
    PartitionedTable "pg_catalog" "pg_partitioned_table" [
        "partrelid" O, "partstrat" T, "partnatts" I2, "partdefid" O, "partattrs" V2, "partclass" VO,
        "partcollation" VO, "partexprs" T,
    ]
    Policy "pg_catalog" "pg_policy" [
        "oid" O, "polname" T, "polrelid" O, "polcmd" T, "polpermissive" B, "polroles" T, "polqual" T,
        "polwithcheck" T,
    ]
    StatisticExt "pg_catalog" "pg_statistic_ext" [
        "oid" O, "stxrelid" O, "stxname" T, "stxnamespace" O, "stxowner" O, "stxstattarget" I4,
        "stxkeys" V2, "stxkind" T, "stxexprs" T,
    ]
    Publication "pg_catalog" "pg_publication" [
        "oid" O, "pubname" T, "pubowner" O, "puballtables" B, "pubinsert" B, "pubupdate" B,
        "pubdelete" B, "pubtruncate" B, "pubviaroot" B,
    ]
    PublicationRel "pg_catalog" "pg_publication_rel" ["oid" O, "prpubid" O, "prrelid" O, "prqual" T, "prattrs" V2]
    PublicationNamespace "pg_catalog" "pg_publication_namespace" ["oid" O, "pnpubid" O, "pnnspid" O]
    Collation "pg_catalog" "pg_collation" [
        "oid" O, "collname" T, "collnamespace" O, "collowner" O, "collprovider" T,
        "collisdeterministic" B, "collencoding" I4, "collcollate" T, "collctype" T,
    ]
    Tablespace "pg_catalog" "pg_tablespace" ["oid" O, "spcname" T, "spcowner" O, "spcacl" T, "spcoptions" T]
    Proc "pg_catalog" "pg_proc" [
        "oid" O, "proname" T, "pronamespace" O, "proowner" O, "prolang" O, "prokind" T, "proretset" B,
        "pronargs" I2, "prorettype" O, "proargtypes" VO, "proacl" T, "prosrc" T, "probin" T,
        "provolatile" T, "proisstrict" B, "prosecdef" B, "proconfig" T, "procost" F, "prorows" F,
        "proleakproof" B, "protrftypes" T, "proparallel" T, "prosupport" T,
    ]
    Range "pg_catalog" "pg_range" [
        "rngtypid" O, "rngsubtype" O, "rngmultitypid" O, "rngcollation" O, "rngsubopc" O,
        "rngcanonical" T, "rngsubdiff" T,
    ]
    Enum "pg_catalog" "pg_enum" ["oid" O, "enumtypid" O, "enumsortorder" F, "enumlabel" T]
    Trigger "pg_catalog" "pg_trigger" [
        "oid" O, "tgrelid" O, "tgparentid" O, "tgname" T, "tgfoid" O, "tgtype" I2, "tgenabled" T,
        "tgisinternal" B, "tgconstrrelid" O, "tgconstrindid" O, "tgconstraint" O, "tgdeferrable" B,
        "tginitdeferred" B, "tgnargs" I2, "tgattr" T, "tgqual" T, "tgoldtable" T, "tgnewtable" T,
    ]
    Depend "pg_catalog" "pg_depend" [
        "classid" O, "objid" O, "objsubid" I4, "refclassid" O, "refobjid" O, "refobjsubid" I4, "deptype" T,
    ]
    Extension "pg_catalog" "pg_extension" [
        "oid" O, "extname" T, "extowner" O, "extnamespace" O, "extrelocatable" B, "extversion" T,
        "extconfig" T, "extcondition" T,
    ]
    Rewrite "pg_catalog" "pg_rewrite" [
        "oid" O, "rulename" T, "ev_class" O, "ev_type" T, "ev_enabled" T, "is_instead" B,
    ]
    Sequence "pg_catalog" "pg_sequence" [
        "seqrelid" O, "seqtypid" O, "seqstart" I8, "seqincrement" I8, "seqmax" I8, "seqmin" I8,
        "seqcache" I8, "seqcycle" B,
    ]
    Language "pg_catalog" "pg_language" [
        "oid" O, "lanname" T, "lanowner" O, "lanispl" B, "lanpltrusted" B, "lanplcallfoid" O, "laninline" O,
        "lanvalidator" O, "lanacl" T,
    ]
    InitPrivs "pg_catalog" "pg_init_privs" ["objoid" O, "classoid" O, "objsubid" I4, "privtype" T, "initprivs" T]
    Operator "pg_catalog" "pg_operator" [
        "oid" O, "oprname" T, "oprnamespace" O, "oprowner" O, "oprkind" T, "oprcanmerge" B, "oprcanhash" B,
        "oprleft" O, "oprright" O, "oprresult" O, "oprcom" O, "oprnegate" O, "oprcode" O, "oprrest" T,
        "oprjoin" T,
    ]
    Opclass "pg_catalog" "pg_opclass" [
        "oid" O, "opcmethod" O, "opcname" T, "opcnamespace" O, "opcowner" O, "opcfamily" O, "opcintype" O,
        "opcdefault" B, "opckeytype" O,
    ]
    Opfamily "pg_catalog" "pg_opfamily" ["oid" O, "opfmethod" O, "opfname" T, "opfnamespace" O, "opfowner" O]
    Amop "pg_catalog" "pg_amop" [
        "oid" O, "amopfamily" O, "amoplefttype" O, "amoprighttype" O, "amopstrategy" I2, "amoppurpose" T,
        "amopopr" O, "amopmethod" O, "amopsortfamily" O,
    ]
    Amproc "pg_catalog" "pg_amproc" [
        "oid" O, "amprocfamily" O, "amproclefttype" O, "amprocrighttype" O, "amprocnum" I2, "amproc" T,
    ]
    TsParser "pg_catalog" "pg_ts_parser" [
        "oid" O, "prsname" T, "prsnamespace" O, "prsstart" T, "prstoken" T, "prsend" T, "prsheadline" T,
        "prslextype" T,
    ]
    TsTemplate "pg_catalog" "pg_ts_template" ["oid" O, "tmplname" T, "tmplnamespace" O, "tmplinit" T, "tmpllexize" T]
    TsDict "pg_catalog" "pg_ts_dict" [
        "oid" O, "dictname" T, "dictnamespace" O, "dictowner" O, "dicttemplate" O, "dictinitoption" T,
    ]
    TsConfig "pg_catalog" "pg_ts_config" ["oid" O, "cfgname" T, "cfgnamespace" O, "cfgowner" O, "cfgparser" O]
    TsConfigMap "pg_catalog" "pg_ts_config_map" ["mapcfg" O, "maptokentype" I4, "mapseqno" I4, "mapdict" O]
    ForeignDataWrapper "pg_catalog" "pg_foreign_data_wrapper" [
        "oid" O, "fdwname" T, "fdwowner" O, "fdwhandler" T, "fdwvalidator" T, "fdwacl" T, "fdwoptions" T,
    ]
    ForeignServer "pg_catalog" "pg_foreign_server" [
        "oid" O, "srvname" T, "srvowner" O, "srvfdw" O, "srvtype" T, "srvversion" T, "srvacl" T,
        "srvoptions" T,
    ]
    ForeignTable "pg_catalog" "pg_foreign_table" ["ftrelid" O, "ftserver" O, "ftoptions" T]
    UserMappings "pg_catalog" "pg_user_mappings" [
        "umid" O, "srvid" O, "srvname" T, "umuser" O, "usename" T, "umoptions" T,
    ]
    DefaultAcl "pg_catalog" "pg_default_acl" [
        "oid" O, "defaclrole" O, "defaclnamespace" O, "defaclobjtype" T, "defaclacl" T,
    ]
    Conversion "pg_catalog" "pg_conversion" [
        "oid" O, "conname" T, "connamespace" O, "conowner" O, "conforencoding" I4, "contoencoding" I4,
        "conproc" T, "condefault" B,
    ]
    Cast "pg_catalog" "pg_cast" [
        "oid" O, "castsource" O, "casttarget" O, "castfunc" O, "castcontext" T, "castmethod" T,
    ]
    Transform "pg_catalog" "pg_transform" ["oid" O, "trftype" O, "trflang" O, "trffromsql" O, "trftosql" O]
    EventTrigger "pg_catalog" "pg_event_trigger" [
        "oid" O, "evtname" T, "evtevent" T, "evtowner" O, "evtfoid" O, "evtenabled" T, "evttags" T,
    ]
    Subscription "pg_catalog" "pg_subscription" [
        "oid" O, "subdbid" O, "subskiplsn" T, "subname" T, "subowner" O, "subenabled" B, "subbinary" B,
        "substream" T, "subtwophasestate" T, "subdisableonerr" B, "subconninfo" T, "subslotname" T,
        "subsynccommit" T, "subpublications" T,
    ]
    LargeobjectMetadata "pg_catalog" "pg_largeobject_metadata" ["oid" O, "lomowner" O, "lomacl" T]
    ParameterAcl "pg_catalog" "pg_parameter_acl" ["oid" O, "parname" T, "paracl" T]
    DbRoleSetting "pg_catalog" "pg_db_role_setting" ["setdatabase" O, "setrole" O, "setconfig" T]
    Shseclabel "pg_catalog" "pg_shseclabel" ["objoid" O, "classoid" O, "provider" T, "label" T]
    Seclabels "pg_catalog" "pg_seclabels" [
        "objoid" O, "classoid" O, "objsubid" I4, "objtype" T, "objnamespace" O, "objname" T, "provider" T,
        "label" T,
    ]
    Tables "information_schema" "tables" [
        "table_catalog" T, "table_schema" T, "table_name" T, "table_type" T,
        "self_referencing_column_name" T, "reference_generation" T, "user_defined_type_catalog" T,
        "user_defined_type_schema" T, "user_defined_type_name" T, "is_insertable_into" T,
        "is_typed" T, "commit_action" T,
    ]
    Columns "information_schema" "columns" [
        "table_catalog" T, "table_schema" T, "table_name" T, "column_name" T, "ordinal_position" I4,
        "column_default" T, "is_nullable" T, "data_type" T, "character_maximum_length" I4,
        "character_octet_length" I4, "numeric_precision" I4, "numeric_precision_radix" I4,
        "numeric_scale" I4, "datetime_precision" I4, "udt_catalog" T, "udt_schema" T, "udt_name" T,
        "is_identity" T, "identity_generation" T, "is_generated" T, "generation_expression" T,
        "is_updatable" T,
    ]
    Schemata "information_schema" "schemata" [
        "catalog_name" T, "schema_name" T, "schema_owner" T, "default_character_set_catalog" T,
        "default_character_set_schema" T, "default_character_set_name" T, "sql_path" T,
    ]
    TableConstraints "information_schema" "table_constraints" [
        "constraint_catalog" T, "constraint_schema" T, "constraint_name" T, "table_catalog" T,
        "table_schema" T, "table_name" T, "constraint_type" T, "is_deferrable" T,
        "initially_deferred" T, "enforced" T, "nulls_distinct" T,
    ]
    KeyColumnUsage "information_schema" "key_column_usage" [
        "constraint_catalog" T, "constraint_schema" T, "constraint_name" T, "table_catalog" T,
        "table_schema" T, "table_name" T, "column_name" T, "ordinal_position" I4,
        "position_in_unique_constraint" I4,
    ]
    Views "pg_catalog" "pg_views" ["schemaname" T, "viewname" T, "viewowner" T, "definition" T]
    Matviews "pg_catalog" "pg_matviews" [
        "schemaname" T, "matviewname" T, "matviewowner" T, "tablespace" T, "hasindexes" B,
        "ispopulated" B, "definition" T,
    ]
    StatUserTables "pg_catalog" "pg_stat_user_tables" [
        "relid" O, "schemaname" T, "relname" T, "seq_scan" I8, "seq_tup_read" I8, "idx_scan" I8,
        "idx_tup_fetch" I8, "n_tup_ins" I8, "n_tup_upd" I8, "n_tup_del" I8, "n_tup_hot_upd" I8,
        "n_live_tup" I8, "n_dead_tup" I8, "n_mod_since_analyze" I8, "n_ins_since_vacuum" I8,
        "last_vacuum" Ty::Ts, "last_autovacuum" Ty::Ts, "last_analyze" Ty::Ts, "last_autoanalyze" Ty::Ts,
        "vacuum_count" I8, "autovacuum_count" I8, "analyze_count" I8, "autoanalyze_count" I8,
    ]
    StatUserIndexes "pg_catalog" "pg_stat_user_indexes" [
        "relid" O, "indexrelid" O, "schemaname" T, "relname" T, "indexrelname" T, "idx_scan" I8,
        "idx_tup_read" I8, "idx_tup_fetch" I8,
    ]
    StatDatabase "pg_catalog" "pg_stat_database" [
        "datid" O, "datname" T, "numbackends" I4, "xact_commit" I8, "xact_rollback" I8, "blks_read" I8,
        "blks_hit" I8, "tup_returned" I8, "tup_fetched" I8, "tup_inserted" I8, "tup_updated" I8,
        "tup_deleted" I8, "conflicts" I8, "temp_files" I8, "temp_bytes" I8, "deadlocks" I8,
        "checksum_failures" I8, "checksum_last_failure" Ty::Ts, "blk_read_time" F, "blk_write_time" F,
        "session_time" F, "active_time" F, "idle_in_transaction_time" F, "sessions" I8,
        "sessions_abandoned" I8, "sessions_fatal" I8, "sessions_killed" I8, "stats_reset" Ty::Ts,
    ]
    Locks "pg_catalog" "pg_locks" [
        "locktype" T, "database" O, "relation" O, "page" I4, "tuple" I2, "virtualxid" T,
        "transactionid" T, "classid" O, "objid" O, "objsubid" I2, "virtualtransaction" T, "pid" I4,
        "mode" T, "granted" B, "fastpath" B, "waitstart" Ty::Ts,
    ]
    ReplicationSlots "pg_catalog" "pg_replication_slots" [
        "slot_name" T, "plugin" T, "slot_type" T, "datoid" O, "database" T, "temporary" B, "active" B,
        "active_pid" I4, "xmin" T, "catalog_xmin" T, "restart_lsn" T, "confirmed_flush_lsn" T,
        "wal_status" T, "safe_wal_size" I8, "two_phase" B,
    ]
    PublicationTables "pg_catalog" "pg_publication_tables" [
        "pubname" T, "schemaname" T, "tablename" T, "attnames" T, "rowfilter" T,
    ]
    PgTables "pg_catalog" "pg_tables" [
        "schemaname" T, "tablename" T, "tableowner" T, "tablespace" T, "hasindexes" B, "hasrules" B,
        "hastriggers" B, "rowsecurity" B,
    ]
    PgIndexes "pg_catalog" "pg_indexes" ["schemaname" T, "tablename" T, "indexname" T, "tablespace" T, "indexdef" T]
    CentumTableMemory "centum" "table_memory" [
        "schema_name" T, "table_name" T, "durability" T, "rows" I8, "versions" I8, "dead_versions" I8,
        "row_bytes" I8, "index_bytes" I8, "garbage_bytes" I8, "total_bytes" I8, "memory_limit" I8,
        "bytes_per_version" F, "index_bytes_per_row" F,
    ]
    CentumHashIndexStats "centum" "hash_index_stats" [
        "schema_name" T, "table_name" T, "index_name" T, "total_buckets" I8, "empty_buckets" I8,
        "avg_chain_length" F, "max_chain_length" I8, "duplicate_keys" I8, "entries" I8, "bytes" I8,
        "sampled_buckets" I8, "bytes_per_row" F, "starting_buckets" I8,
    ]
    CentumRangeIndexStats "centum" "range_index_stats" [
        "schema_name" T, "table_name" T, "index_name" T, "height" I8, "leaf_nodes" I8, "inner_nodes" I8,
        "fill" F, "keys" I8, "bytes" I8, "bytes_per_row" F,
    ]
    CentumCheckpointFiles "centum" "checkpoint_files" [
        "pair_id" I8, "file" T, "file_type" T, "state" T, "rows" I8, "deleted_rows" I8, "bytes" I8,
        "lower_bound_ts" I8, "upper_bound_ts" I8,
    ]
    CentumLog "centum" "log" [
        "appended_ts" I8, "durable_ts" I8, "records" I8, "flushes" I8, "bytes_written" I8,
        "avg_batch_records" F, "largest_batch_records" I8, "syncs_per_second" F, "pending_records" I8,
        "pending_bytes" I8, "delayed_records" I8, "delayed_bytes" I8, "delayed_age_ms" F,
        "timer_flushes" I8, "failed_writes" I8, "failure" T,
    ]
    CentumGc "centum" "gc" [
        "versions_queued" I8, "versions_reclaimed" I8, "unlinked_by_readers" I8, "horizon_ts" I8,
        "oldest_snapshot_ts" I8, "oldest_snapshot_txid" I8, "oldest_snapshot_pid" I4,
        "oldest_snapshot_age_s" F, "sweep_steps" I8,
    ]
    CentumTransactions "centum" "transactions" [
        "txid" I8, "pid" I4, "state" T, "isolation" T, "xact_start" Ty::Ts, "age_s" F, "read_ts" I8,
        "commit_ts" I8, "read_set" I8, "write_set" I8, "holds_rows" B, "waiting_for_txid" I8,
        "waiting_for_pid" I4, "commit_dependency_ts" I8,
    ]
    CentumCluster "centum" "cluster" [
        "member_id" I8, "address" T, "voter" B, "role" T, "is_self" B, "term" I8, "durable_index" I8,
        "applied_index" I8, "snapshot_index" I8, "lag" I8,
    ]
    InfoViews "information_schema" "views" [
        "table_catalog" T, "table_schema" T, "table_name" T, "view_definition" T, "check_option" T,
        "is_updatable" T, "is_insertable_into" T, "is_trigger_updatable" T,
        "is_trigger_deletable" T, "is_trigger_insertable_into" T,
    ]
    InfoTriggers "information_schema" "triggers" [
        "trigger_catalog" T, "trigger_schema" T, "trigger_name" T, "event_manipulation" T,
        "event_object_catalog" T, "event_object_schema" T, "event_object_table" T, "action_order" I4,
        "action_condition" T, "action_statement" T, "action_orientation" T, "action_timing" T,
        "action_reference_old_table" T, "action_reference_new_table" T,
        "action_reference_old_row" T, "action_reference_new_row" T, "created" Ty::Ts,
    ]
}

impl SystemTable {
    /// The virtual table `name` in `schema` (`None`: pg_catalog, as the
    /// implicit first entry of the search path).
    pub fn lookup(schema: Option<&str>, name: &str) -> Option<SystemTable> {
        let schema = schema.unwrap_or("pg_catalog");
        // The `_all_` statistics views hold what the `_user_` ones do: the
        // catalogs are virtual, never scanned.
        let name = match (schema, name) {
            ("pg_catalog", "pg_stat_all_tables") => "pg_stat_user_tables",
            ("pg_catalog", "pg_stat_all_indexes") => "pg_stat_user_indexes",
            _ => name,
        };
        SystemTable::ALL.iter().copied().find(|t| t.name() == (schema, name))
    }

    /// Its OID: PostgreSQL's for the catalog tables (pg_class is 1259, as
    /// `classid` columns expect); views get numbers below 16384 that
    /// PostgreSQL leaves to its own initdb-time objects.
    pub fn oid(self) -> i32 {
        match self.name().1 {
            "pg_namespace" => 2615,
            "pg_class" => 1259,
            "pg_attribute" => 1249,
            "pg_type" => 1247,
            "pg_index" => 2610,
            "pg_constraint" => 2606,
            "pg_attrdef" => 2604,
            "pg_am" => 2601,
            "pg_database" => 1262,
            "pg_authid" => 1260,
            "pg_auth_members" => 1261,
            "pg_description" => 2609,
            "pg_inherits" => 2611,
            "pg_partitioned_table" => 3350,
            "pg_policy" => 3256,
            "pg_statistic_ext" => 3381,
            "pg_publication" => 6104,
            "pg_publication_rel" => 6106,
            "pg_publication_namespace" => 6237,
            "pg_collation" => 3456,
            "pg_tablespace" => 1213,
            "pg_proc" => 1255,
            "pg_range" => 3541,
            "pg_enum" => 3501,
            "pg_trigger" => 2620,
            "pg_rewrite" => 2618,
            "pg_sequence" => 2224,
            "pg_depend" => 2608,
            "pg_extension" => 3079,
            "pg_init_privs" => 3394,
            "pg_operator" => 2617,
            "pg_opclass" => 2616,
            "pg_opfamily" => 2753,
            "pg_amop" => 2602,
            "pg_amproc" => 2603,
            "pg_ts_parser" => 3601,
            "pg_ts_template" => 3764,
            "pg_ts_dict" => 3600,
            "pg_ts_config" => 3602,
            "pg_ts_config_map" => 3603,
            "pg_foreign_data_wrapper" => 2328,
            "pg_foreign_server" => 1417,
            "pg_foreign_table" => 3118,
            "pg_default_acl" => 826,
            "pg_conversion" => 2607,
            "pg_cast" => 2605,
            "pg_transform" => 3576,
            "pg_event_trigger" => 3466,
            "pg_subscription" => 6100,
            "pg_largeobject_metadata" => 2995,
            "pg_language" => 2612,
            "pg_shseclabel" => 3592,
            "pg_db_role_setting" => 2964,
            "pg_parameter_acl" => 6243,
            _ => 12000 + SystemTable::ALL.iter().position(|t| *t == self).unwrap_or(0) as i32,
        }
    }

    /// The virtual table with OID `oid`.
    pub fn by_oid(oid: i32) -> Option<SystemTable> {
        SystemTable::ALL.iter().copied().find(|t| t.oid() == oid)
    }

    /// Its columns.
    pub fn columns(self) -> Vec<OutputColumn> {
        self.spec()
            .iter()
            .map(|(n, t)| OutputColumn { name: n.to_string(), ty: Some(t.data_type()) })
            .collect()
    }

    /// Its rows now.
    pub(crate) fn rows(self, s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
        let rows = match self {
            SystemTable::Namespace => namespaces(s),
            SystemTable::Language => [
                (12, "internal", false, false, 0, 0, 2246),
                (13, "c", false, false, 0, 0, 2247),
                (14, "sql", false, true, 0, 0, 2248),
                (PLPGSQL, "plpgsql", true, true, 13_570, 13_571, 13_572),
            ]
            .into_iter()
            .map(|(o, name, pl, trusted, call, inline, validator)| {
                vec![
                    oid(o),
                    txt(name),
                    oid(s.owner),
                    b(pl),
                    b(trusted),
                    oid(call),
                    oid(inline),
                    oid(validator),
                    Value::Null,
                ]
            })
            .collect(),
            SystemTable::Proc => s
                .routines
                .iter()
                .map(|(o, r)| {
                    vec![
                        oid(*o),
                        txt(&r.name),
                        oid(super::snapshot::PUBLIC),
                        oid(s.owner_of(ObjectKind::Routine, &r.name)),
                        oid(if r.sql { 14 } else { PLPGSQL }),
                        txt(if r.procedure { "p" } else { "f" }),
                        b(r.retset),
                        Value::SmallInt(r.arg_oids.len() as i16),
                        oid(r.result_oid),
                        txt(&r.arg_oids.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(" ")),
                        s.acl_of(ObjectKind::Routine, &r.name),
                        txt(&r.body),
                        Value::Null,
                        txt("v"),
                        b(false),
                        b(false),
                        if r.config.is_empty() { Value::Null } else { txt(&array_text::render(&r.config)) },
                        Value::Double(100.0),
                        Value::Double(if r.retset { 1000.0 } else { 0.0 }),
                        b(false),
                        Value::Null,
                        txt("u"),
                        txt("-"),
                    ]
                })
                .collect(),
            SystemTable::Class => classes(s),
            SystemTable::Operator => super::operators::OPERATORS
                .iter()
                // `oprcode` is a `regproc` in PostgreSQL; built-in functions
                // have no rows in Centum's pg_proc, so it is 0 (pg_dump
                // reads it as an OID).
                .map(|&(o, name, kind, merge, hash, left, right, result, com, neg, _code, rest, join)| {
                    vec![
                        oid(o),
                        txt(name),
                        oid(PG_CATALOG),
                        oid(s.owner),
                        txt(kind),
                        b(merge),
                        b(hash),
                        oid(left),
                        oid(right),
                        oid(result),
                        oid(com),
                        oid(neg),
                        oid(0),
                        txt(rest),
                        txt(join),
                    ]
                })
                .collect(),
            SystemTable::Depend => depends(s),
            // The comment every PostgreSQL database has on `public` (so
            // pg_dump writes none for it).
            SystemTable::Description => s
                .descriptions()
                .iter()
                .map(|(o, class, sub, text)| vec![oid(*o), oid(*class), Value::Integer(*sub), txt(text)])
                .collect(),
            SystemTable::Attribute => attributes(s),
            SystemTable::Type => pg_types(s),
            SystemTable::Enum => enum_labels(s),
            SystemTable::Index => indexes(s),
            SystemTable::Constraint => constraints(s),
            SystemTable::Attrdef => attrdefs(s),
            SystemTable::Am => vec![
                vec![oid(AM_HEAP), txt("heap"), txt("heap_tableam_handler"), txt("t")],
                vec![oid(AM_BTREE), txt("btree"), txt("bthandler"), txt("i")],
                vec![oid(AM_HASH), txt("hash"), txt("hashhandler"), txt("i")],
            ],
            SystemTable::Database => vec![vec![
                oid(DATABASE),
                txt(id.database),
                oid(s.owner),
                Value::Integer(6),
                txt("c"),
                b(false),
                b(true),
                Value::Integer(-1),
                txt("0"),
                txt("1"),
                oid(1663),
                txt("C"),
                txt("C"),
                Value::Null,
                Value::Null,
                Value::Null,
            ]],
            SystemTable::Roles => s
                .role_rows(id.user)
                .into_iter()
                .map(|(o, name, sup, login)| {
                    vec![
                        txt(&name),
                        b(sup),
                        b(true),
                        b(sup),
                        b(sup),
                        b(login),
                        b(sup),
                        Value::Integer(-1),
                        txt("********"),
                        Value::Null,
                        b(sup),
                        Value::Null,
                        oid(o),
                    ]
                })
                .collect(),
            SystemTable::Authid => s
                .role_rows(id.user)
                .into_iter()
                .map(|(o, name, sup, login)| {
                    let verifier =
                        s.roles.iter().find(|(x, _)| *x == o).and_then(|(_, r)| r.verifier.clone());
                    vec![
                        oid(o),
                        txt(&name),
                        b(sup),
                        b(true),
                        b(sup),
                        b(sup),
                        b(login),
                        b(sup),
                        b(sup),
                        Value::Integer(-1),
                        verifier.map_or(Value::Null, Value::Text),
                        Value::Null,
                    ]
                })
                .collect(),
            SystemTable::User => s
                .role_rows(id.user)
                .into_iter()
                .filter(|r| r.3)
                .map(|(o, name, sup, _)| {
                    vec![
                        txt(&name),
                        oid(o),
                        b(sup),
                        b(sup),
                        b(sup),
                        b(sup),
                        txt("********"),
                        Value::Null,
                        Value::Null,
                    ]
                })
                .collect(),
            SystemTable::Settings => settings(id),
            SystemTable::StatActivity => {
                // usesysid: the OID of the session's role (column 5, after
                // usename), from this snapshot's roles.
                let roles = s.role_rows(id.user);
                let mut rows = id.activity.map(|a| a.rows()).unwrap_or_default();
                for r in &mut rows {
                    if let Some((oid, ..)) =
                        roles.iter().find(|(_, name, ..)| matches!(&r[5], Value::Text(u) if u == name))
                    {
                        r[4] = Value::Integer(*oid);
                    }
                }
                rows
            }
            SystemTable::Extension => vec![vec![
                oid(CENTUM_EXTENSION),
                txt("centum"),
                oid(s.owner),
                oid(super::snapshot::CENTUM),
                b(false),
                txt(env!("CARGO_PKG_VERSION")),
                Value::Null,
                Value::Null,
            ]],
            SystemTable::CentumTableMemory => super::centum::table_memory(s),
            SystemTable::CentumHashIndexStats => super::centum::hash_index_stats(s),
            SystemTable::CentumRangeIndexStats => super::centum::range_index_stats(s),
            SystemTable::CentumCheckpointFiles => super::centum::checkpoint_files(s),
            SystemTable::CentumLog => super::centum::log(s),
            SystemTable::ReplicationSlots => super::centum::replication_slots(s),
            SystemTable::Publication => s
                .publications
                .iter()
                .map(|p| {
                    let owner =
                        s.roles.iter().find(|(_, r)| r.name == p.def.owner).map_or(s.owner, |(o, _)| *o);
                    let bit = |m: u8| b(p.def.publish & m != 0);
                    use crate::catalog::{PUBLISH_DELETE, PUBLISH_INSERT, PUBLISH_TRUNCATE, PUBLISH_UPDATE};
                    vec![
                        oid(p.oid),
                        txt(&p.def.name),
                        oid(owner),
                        b(p.def.all_tables),
                        bit(PUBLISH_INSERT),
                        bit(PUBLISH_UPDATE),
                        bit(PUBLISH_DELETE),
                        bit(PUBLISH_TRUNCATE),
                        b(false),
                    ]
                })
                .collect(),
            SystemTable::PublicationRel => s
                .publications
                .iter()
                .flat_map(|p| p.listed.iter().map(move |(o, t)| (p, *o, t)))
                .filter_map(|(p, row, t)| {
                    let rel = s.table_by_name(t)?;
                    Some(vec![oid(row), oid(p.oid), oid(rel.oid), Value::Null, Value::Null])
                })
                .collect(),
            SystemTable::PublicationTables => s
                .publications
                .iter()
                .flat_map(|p| p.tables.iter().map(move |t| (p, t)))
                .filter_map(|(p, t)| {
                    let rel = s.table_by_name(t)?;
                    let names: Vec<String> = rel
                        .info
                        .table
                        .columns()
                        .iter()
                        .filter(|c| !is_hidden_column(&c.name))
                        .map(|c| c.name.clone())
                        .collect();
                    Some(vec![
                        txt(&p.def.name),
                        txt(&rel.schema),
                        txt(&rel.name),
                        txt(&array_text::render(&names)),
                        Value::Null,
                    ])
                })
                .collect(),
            SystemTable::CentumGc => super::centum::gc(s, id),
            SystemTable::CentumTransactions => super::centum::transactions(s, id),
            SystemTable::CentumCluster => super::centum::cluster(id),
            SystemTable::StatUserTables => stats::tables(s),
            SystemTable::StatUserIndexes => stats::indexes(s),
            SystemTable::StatDatabase => stats::database(s, id),
            SystemTable::Locks => {
                let mut rows = id.activity.map(|a| a.locks()).unwrap_or_default();
                for r in rows.iter_mut().filter(|r| matches!(&r[0], Value::Text(t) if t == "advisory")) {
                    r[1] = Value::Integer(super::snapshot::DATABASE);
                }
                rows
            }
            SystemTable::PgTables => {
                let owner = |t: &TableRel| {
                    s.role_name(s.owner_of(ObjectKind::Relation, &t.engine_name), id.user).unwrap_or_default()
                };
                s.tables
                    .iter()
                    .filter(|t| t.materialized.is_none())
                    .map(|t| {
                        vec![
                            txt(&t.schema),
                            txt(&t.name),
                            txt(&owner(t)),
                            Value::Null,
                            b(!t.indexes.is_empty()),
                            b(false),
                            b(has_triggers(t)),
                            b(false),
                        ]
                    })
                    .collect()
            }
            SystemTable::PgIndexes => s
                .tables
                .iter()
                .flat_map(|t| {
                    t.indexes.iter().map(|ix| {
                        vec![
                            txt(&t.schema),
                            txt(&t.name),
                            txt(&index_name(&ix.def.name)),
                            Value::Null,
                            super::functions::indexdef(s, ix.oid, 0, false, &[])
                                .map_or(Value::Null, Value::Text),
                        ]
                    })
                })
                .collect(),
            SystemTable::Collation => vec![
                vec![
                    oid(100),
                    txt("default"),
                    oid(PG_CATALOG),
                    oid(s.owner),
                    txt("d"),
                    b(true),
                    Value::Integer(-1),
                    Value::Null,
                    Value::Null,
                ],
                vec![
                    oid(950),
                    txt("C"),
                    oid(PG_CATALOG),
                    oid(s.owner),
                    txt("c"),
                    b(true),
                    Value::Integer(-1),
                    txt("C"),
                    txt("C"),
                ],
                vec![
                    oid(951),
                    txt("POSIX"),
                    oid(PG_CATALOG),
                    oid(s.owner),
                    txt("c"),
                    b(true),
                    Value::Integer(-1),
                    txt("POSIX"),
                    txt("POSIX"),
                ],
            ],
            SystemTable::Tablespace => vec![
                vec![oid(1663), txt("pg_default"), oid(s.owner), Value::Null, Value::Null],
                vec![oid(1664), txt("pg_global"), oid(s.owner), Value::Null, Value::Null],
            ],
            SystemTable::Sequence => sequences(s),
            SystemTable::Tables => info_tables(s, id),
            SystemTable::Columns => info_columns(s, id),
            SystemTable::Schemata => s
                .schemas
                .iter()
                .map(|(_, n)| {
                    vec![
                        txt(id.database),
                        txt(n),
                        txt(id.user),
                        Value::Null,
                        Value::Null,
                        Value::Null,
                        Value::Null,
                    ]
                })
                .collect(),
            SystemTable::TableConstraints => info_constraints(s, id),
            SystemTable::KeyColumnUsage => info_key_columns(s, id),
            SystemTable::Views => s
                .views
                .iter()
                .map(|v| {
                    let owner = s.role_name(s.owner_of(ObjectKind::Relation, &v.def.name), id.user);
                    vec![
                        txt(&v.schema),
                        txt(&v.name),
                        txt(&owner.unwrap_or_default()),
                        txt(&view_definition(&v.def)),
                    ]
                })
                .collect(),
            SystemTable::Matviews => {
                let owner = s.role_name(s.owner, id.user).unwrap_or_default();
                s.tables
                    .iter()
                    .filter_map(|t| {
                        let d = t.materialized.as_ref()?;
                        Some(vec![
                            txt(&t.schema),
                            txt(&t.name),
                            txt(&owner),
                            Value::Null,
                            b(!t.indexes.is_empty()),
                            b(d.populated),
                            txt(&view_definition(d)),
                        ])
                    })
                    .collect()
            }
            SystemTable::InfoViews => s
                .views
                .iter()
                .map(|v| {
                    vec![
                        txt(id.database),
                        txt(&v.schema),
                        txt(&v.name),
                        txt(&view_definition(&v.def)),
                        txt("NONE"),
                        yes(v.updatable),
                        yes(v.updatable),
                        yes(false),
                        yes(false),
                        yes(false),
                    ]
                })
                .collect(),
            SystemTable::Trigger => s
                .all_triggers()
                .into_iter()
                .map(|(rel, _, _, columns, x)| {
                    let attnums: Vec<String> = x
                        .def
                        .columns
                        .iter()
                        .filter_map(|c| columns.iter().position(|n| n == c).map(|i| (i + 1).to_string()))
                        .collect();
                    let opt = |v: &Option<String>| v.as_deref().map_or(Value::Null, txt);
                    vec![
                        oid(x.oid),
                        oid(rel),
                        oid(0),
                        txt(&x.def.name),
                        oid(s.routine_oid(&x.def.function).unwrap_or(0)),
                        Value::SmallInt(x.def.tgtype()),
                        txt(if x.enabled { "O" } else { "D" }),
                        b(false),
                        oid(0),
                        oid(0),
                        oid(0),
                        b(false),
                        b(false),
                        Value::SmallInt(x.def.args.len() as i16),
                        txt(&attnums.join(" ")),
                        opt(&x.def.when),
                        opt(&x.def.old_table),
                        opt(&x.def.new_table),
                    ]
                })
                .collect(),
            SystemTable::InfoTriggers => info_triggers(s, id),
            // A view's query is its one rule, `_RETURN`, as in PostgreSQL.
            SystemTable::Rewrite => view_rules(s)
                .into_iter()
                .map(|(rule, view, _)| {
                    vec![oid(rule), txt("_RETURN"), oid(view), txt("1"), txt("O"), b(true)]
                })
                .collect(),
            // Objects Centum does not have: no comments, inheritance,
            // partitions, policies, extended statistics, publications,
            // range types, rules other than views',
            // role memberships,
            // user-defined operators, operator classes, casts,
            // conversions, transforms or text search objects, foreign
            // data, default or initial privileges, event triggers,
            // subscriptions, large objects or security labels.
            SystemTable::AuthMembers
            | SystemTable::Inherits
            | SystemTable::PartitionedTable
            | SystemTable::Policy
            | SystemTable::StatisticExt
            | SystemTable::PublicationNamespace
            | SystemTable::Range
            | SystemTable::InitPrivs
            | SystemTable::Opclass
            | SystemTable::Opfamily
            | SystemTable::Amop
            | SystemTable::Amproc
            | SystemTable::TsParser
            | SystemTable::TsTemplate
            | SystemTable::TsDict
            | SystemTable::TsConfig
            | SystemTable::TsConfigMap
            | SystemTable::ForeignDataWrapper
            | SystemTable::ForeignServer
            | SystemTable::ForeignTable
            | SystemTable::UserMappings
            | SystemTable::DefaultAcl
            | SystemTable::Conversion
            | SystemTable::Cast
            | SystemTable::Transform
            | SystemTable::EventTrigger
            | SystemTable::Subscription
            | SystemTable::LargeobjectMetadata
            | SystemTable::Shseclabel
            | SystemTable::DbRoleSetting
            | SystemTable::ParameterAcl
            | SystemTable::Seclabels => vec![],
        };
        debug_assert!(rows.iter().all(|r| r.len() == self.spec().len()), "{self:?}");
        rows
    }
}

fn oid(o: i32) -> Value {
    Value::Integer(o)
}

fn txt(s: &str) -> Value {
    Value::Text(s.to_string())
}

fn b(v: bool) -> Value {
    Value::Boolean(v)
}

fn i2(v: usize) -> Value {
    Value::SmallInt(v.min(i16::MAX as usize) as i16)
}

/// pg_class's `relowner` and `relacl` columns.
const RELOWNER: usize = 5;
const RELACL: usize = 28;

fn namespaces(s: &Snapshot) -> Vec<Vec<Value>> {
    s.schemas
        .iter()
        .map(|(o, n)| {
            let (owner, acl) = if n == "pg_catalog" || n == "information_schema" {
                (s.owner, Value::Null)
            } else {
                (s.owner_of(ObjectKind::Schema, n), s.acl_of(ObjectKind::Schema, n))
            };
            vec![oid(*o), txt(n), oid(owner), acl]
        })
        .collect()
}

fn classes(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    let row = |o: i32, name: &str, nsp: i32, am: i32, kind: RelKind, natts: usize, t: Option<&TableRel>| {
        let meta = t.map(|t| &t.info.meta);
        let durable = t.is_none_or(|t| t.info.table.durability() == centum_engine::Durability::SchemaAndData);
        vec![
            oid(o),
            txt(name),
            oid(nsp),
            oid(0),
            oid(0),
            oid(s.owner),
            oid(am),
            oid(o),
            oid(0),
            Value::Integer(0),
            Value::Double(-1.0),
            Value::Integer(0),
            oid(0),
            b(t.is_some_and(|t| !t.indexes.is_empty())),
            b(false),
            txt(if durable { "p" } else { "u" }),
            txt(kind.code()),
            i2(natts),
            i2(meta.map_or(0, |m| m.checks.len())),
            b(false),
            b(t.is_some_and(has_triggers)),
            b(false),
            b(false),
            b(false),
            b(true),
            txt(if matches!(kind, RelKind::Table | RelKind::MaterializedView) { "d" } else { "n" }),
            b(false),
            oid(0),
            Value::Null,
            Value::Null,
            Value::Null,
            txt("0"),
            txt("0"),
        ]
    };
    for t in &s.tables {
        let nsp = s.schema_oid(&t.schema);
        let mut r = row(t.oid, &t.name, nsp, AM_HEAP, t.kind(), t.info.table.columns().len(), Some(t));
        if let Some(m) = &t.materialized {
            r[24] = b(m.populated);
        }
        let owner = s.owner_of(ObjectKind::Relation, &t.engine_name);
        r[RELOWNER] = oid(owner);
        r[RELACL] = s.acl_of(ObjectKind::Relation, &t.engine_name);
        out.push(r);
        for ix in &t.indexes {
            let am = if hash_buckets(&ix.def).is_some() { AM_HASH } else { AM_BTREE };
            let mut r =
                row(ix.oid, &index_name(&ix.def.name), nsp, am, RelKind::Index, ix.attnums.len(), None);
            r[RELOWNER] = oid(owner);
            if let Some(n) = hash_buckets(&ix.def) {
                r[29] = txt(&array_text::render(&[format!("bucket_count={n}")]));
            }
            out.push(r);
        }
    }
    for q in &s.sequences {
        let mut r = row(q.oid, &q.name, s.schema_oid(&q.schema), 0, RelKind::Sequence, 3, None);
        r[RELOWNER] = oid(s.owner_of(ObjectKind::Sequence, &q.engine_name));
        r[RELACL] = s.acl_of(ObjectKind::Sequence, &q.engine_name);
        out.push(r);
    }
    for v in &s.views {
        let mut r = row(v.oid, &v.name, s.schema_oid(&v.schema), 0, RelKind::View, v.columns.len(), None);
        r[RELOWNER] = oid(s.owner_of(ObjectKind::Relation, &v.def.name));
        r[RELACL] = s.acl_of(ObjectKind::Relation, &v.def.name);
        // No storage; its query is a rule.
        r[7] = oid(0);
        r[19] = b(true);
        r[20] = b(!v.triggers.is_empty());
        out.push(r);
    }
    // A composite type's relation: its fields, no storage.
    for (e, ty) in &s.composites {
        let (schema, name) = super::snapshot::split_name(&e.name);
        let mut r = row(
            e.oid as i32 + 2,
            &name,
            s.schema_oid(&schema),
            0,
            RelKind::CompositeType,
            ty.fields().len(),
            None,
        );
        r[3] = oid(e.oid as i32);
        r[7] = oid(0);
        out.push(r);
    }
    // The engine's views: built in, defined by no stored query.
    for t in SystemTable::ALL.iter().filter(|t| t.name().0 == "centum") {
        let mut r = row(t.oid(), t.name().1, super::snapshot::CENTUM, 0, RelKind::View, t.spec().len(), None);
        r[7] = oid(0);
        r[19] = b(true);
        out.push(r);
    }
    out.sort_by_key(|r| if let Value::Integer(o) = r[0] { o } else { 0 });
    out
}

/// Whether PostgreSQL would say `t` has triggers: it enforces foreign keys
/// with triggers on both tables, and psql shows foreign keys only where
/// `relhastriggers` is set.
fn has_triggers(t: &TableRel) -> bool {
    !t.info.meta.foreign_keys.is_empty() || !t.info.referenced_by.is_empty() || !t.triggers.is_empty()
}

/// `information_schema.triggers`: a row per trigger and event, numbered
/// within each table, event, timing and level in firing (name) order.
fn info_triggers(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    use crate::triggers::{DELETE, INSERT, UPDATE};
    let all = s.all_triggers();
    let mut out = Vec::new();
    let mut relations: Vec<(i32, &str, &str)> = all.iter().map(|(o, sc, n, _, _)| (*o, *sc, *n)).collect();
    relations.dedup();
    for (rel, schema, name) in relations {
        let triggers: Vec<&super::snapshot::TriggerRel> =
            all.iter().filter(|t| t.0 == rel).map(|t| t.4).collect();
        for (bit, event) in [(INSERT, "INSERT"), (DELETE, "DELETE"), (UPDATE, "UPDATE")] {
            let mut order = std::collections::HashMap::new();
            for x in triggers.iter().filter(|x| x.def.fires_on(bit)) {
                let n = order.entry((x.def.timing, x.def.row)).or_insert(0);
                *n += 1;
                let args: Vec<String> = x.def.args.iter().map(|a| crate::names::quote_literal(a)).collect();
                let opt = |v: &Option<String>| v.as_deref().map_or(Value::Null, txt);
                out.push(vec![
                    txt(id.database),
                    txt(schema),
                    txt(&x.def.name),
                    txt(event),
                    txt(id.database),
                    txt(schema),
                    txt(name),
                    Value::Integer(*n),
                    opt(&x.def.when),
                    txt(&format!("EXECUTE FUNCTION {}({})", x.def.function, args.join(", "))),
                    txt(if x.def.row { "ROW" } else { "STATEMENT" }),
                    txt(x.def.timing.sql()),
                    opt(&x.def.old_table),
                    opt(&x.def.new_table),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                ]);
            }
        }
    }
    out
}

/// An index's name without the schema its engine name may carry.
pub(crate) fn index_name(engine: &str) -> String {
    super::snapshot::split_name(engine).1
}

#[allow(clippy::too_many_arguments)]
fn attribute(
    rel: i32,
    name: &str,
    ty: &DataType,
    attnum: usize,
    not_null: bool,
    has_def: bool,
    identity: &str,
    generated: &str,
) -> Vec<Value> {
    let t = types::by_oid(oid_of(ty));
    vec![
        oid(rel),
        txt(name),
        oid(oid_of(ty)),
        Value::Integer(-1),
        Value::SmallInt(t.map_or(-1, |t| t.len)),
        i2(attnum),
        Value::Integer(0),
        Value::Integer(-1),
        Value::Integer(ty.pg_typmod()),
        b(t.is_some_and(|t| t.byval)),
        txt(t.map_or("i", |t| t.align)),
        // attstorage: the type's own (an enum's is plain, as its pg_type row says).
        txt(if t.is_some_and(|t| t.len > 0) || matches!(ty, DataType::Enum(_)) { "p" } else { "x" }),
        txt(""),
        b(not_null),
        b(has_def),
        b(false),
        txt(identity),
        txt(generated),
        b(false),
        b(true),
        Value::Integer(0),
        oid(if ty.is_string() { 100 } else { 0 }),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
    ]
}

fn attributes(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        let cols = t.info.table.columns();
        // An index's hidden key columns are not the table's attributes;
        // the others keep their numbers, as around a dropped column.
        for (i, c) in cols.iter().enumerate().filter(|(_, c)| !is_hidden_column(&c.name)) {
            let m = t.info.meta.columns.get(i).cloned().unwrap_or_default();
            let not_null = !c.nullable || t.info.meta.not_null.contains(&i);
            let identity = match m.identity_always {
                Some(true) => "a",
                Some(false) => "d",
                None => "",
            };
            let generated = if m.generated.is_some() { "s" } else { "" };
            let has_def = (m.default.is_some() && m.identity_always.is_none()) || m.generated.is_some();
            out.push(attribute(t.oid, &c.name, &c.ty, i + 1, not_null, has_def, identity, generated));
        }
        for ix in &t.indexes {
            // An expression's attribute is named `expr`, `expr1`, ... as
            // in PostgreSQL; its type is the hidden column's.
            let mut exprs = 0;
            for (k, (&a, &col)) in ix.attnums.iter().zip(&ix.key_cols).enumerate() {
                let Some(c) = cols.get(if a > 0 { a as usize - 1 } else { col }) else { continue };
                let name = match (a, exprs) {
                    (0, 0) => "expr".to_string(),
                    (0, n) => format!("expr{n}"),
                    _ => c.name.clone(),
                };
                exprs += usize::from(a == 0);
                out.push(attribute(ix.oid, &name, &c.ty, k + 1, false, false, "", ""));
            }
        }
    }
    for t in SystemTable::ALL.iter().filter(|t| t.name().0 == "centum") {
        for (i, (name, ty)) in t.spec().iter().enumerate() {
            out.push(attribute(t.oid(), name, &ty.data_type(), i + 1, false, false, "", ""));
        }
    }
    for (e, ty) in &s.composites {
        for (i, (name, t)) in ty.fields().iter().enumerate() {
            out.push(attribute(e.oid as i32 + 2, name, t, i + 1, false, false, "", ""));
        }
    }
    for v in &s.views {
        for (i, c) in v.columns.iter().enumerate() {
            out.push(attribute(
                v.oid,
                &c.name,
                c.ty.as_ref().unwrap_or(&DataType::Text),
                i + 1,
                false,
                false,
                "",
                "",
            ));
        }
    }
    out
}

/// A view's query as `pg_get_viewdef` and the catalog views give it.
pub(crate) fn view_definition(def: &crate::catalog::ViewDef) -> String {
    format!(" {};", def.query)
}

/// pg_type rows of the enum types and their array types.
fn enum_types(s: &Snapshot) -> Vec<Vec<Value>> {
    s.enums.iter().flat_map(|e| user_type_rows(s, &e.name, e.oid, false)).collect()
}

/// pg_type rows of the composite types and their array types; each type's
/// relation (relkind `c`, the OID after its array type's) holds its fields
/// as attributes.
fn composite_types(s: &Snapshot) -> Vec<Vec<Value>> {
    s.composites.iter().flat_map(|(e, _)| user_type_rows(s, &e.name, e.oid, true)).collect()
}

/// The pg_type rows of an enum or composite type (engine name `engine`,
/// OID `type_oid`) and of its array type, the OID after.
fn user_type_rows(s: &Snapshot, engine: &str, type_oid: u32, composite: bool) -> [Vec<Value>; 2] {
    let (schema, name) = super::snapshot::split_name(engine);
    let (ns, owner) = (oid(s.schema_oid(&schema)), oid(s.owner));
    let (t, arr) = (type_oid as i32, type_oid as i32 + 1);
    let io = if composite { "record" } else { "enum" };
    let row = |oid_: i32, name: String, elem: i32, array: i32| {
        let is_array = elem != 0;
        let f = |a: &str, e: &str| txt(if is_array { a } else { e });
        let func = |what: &str| f(&format!("array_{what}"), &format!("{io}_{what}"));
        let (typtype, cat) = match (is_array, composite) {
            (true, _) => ("b", "A"),
            (false, true) => ("c", "C"),
            (false, false) => ("e", "E"),
        };
        let fixed = !is_array && !composite;
        vec![
            oid(oid_),
            Value::Text(name),
            ns.clone(),
            owner.clone(),
            Value::SmallInt(if fixed { 4 } else { -1 }),
            b(fixed),
            txt(typtype),
            txt(cat),
            b(false),
            b(true),
            txt(","),
            oid(if composite && !is_array { t + 2 } else { 0 }),
            f("array_subscript_handler", "-"),
            oid(elem),
            oid(array),
            func("in"),
            func("out"),
            func("recv"),
            func("send"),
            txt(if composite { "d" } else { "i" }),
            txt(if fixed { "p" } else { "x" }),
            b(false),
            oid(0),
            Value::Integer(-1),
            Value::Integer(0),
            oid(0),
            Value::Null,
            Value::Null,
        ]
    };
    [row(t, name.clone(), 0, arr), row(arr, format!("_{name}"), t, 0)]
}

/// pg_enum: every label of every enum type.
fn enum_labels(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &s.enums {
        for (label_oid, l) in &e.labels {
            out.push(vec![
                oid(*label_oid as i32),
                oid(e.oid as i32),
                // pg_enum.enumsortorder is a real (float4).
                Value::Double(f64::from(l.position as f32)),
                Value::Text(l.label.to_string()),
            ]);
        }
    }
    out
}

fn pg_types(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut rows: Vec<Vec<Value>> = TYPES
        .iter()
        .map(|t| {
            let array = t.category == "A" && t.elem != 0;
            vec![
                oid(t.oid),
                txt(t.name),
                oid(PG_CATALOG),
                oid(s.owner),
                Value::SmallInt(t.len),
                b(t.byval),
                txt(if t.category == "P" { "p" } else { "b" }),
                // `unknown` is a pseudo-type of its own category.
                txt(if t.oid == 705 { "X" } else { t.category }),
                b(matches!(t.name, "bool" | "text" | "float8" | "oid" | "timestamptz")),
                b(true),
                txt(","),
                oid(0),
                txt(if array { "array_subscript_handler" } else { "-" }),
                oid(t.elem),
                oid(t.array),
                txt(if array { "array_in" } else { "-" }),
                txt(if array { "array_out" } else { "-" }),
                txt(if array { "array_recv" } else { "-" }),
                txt(if array { "array_send" } else { "-" }),
                txt(t.align),
                txt(if t.len > 0 { "p" } else { "x" }),
                b(false),
                oid(0),
                Value::Integer(-1),
                Value::Integer(0),
                oid(if t.collatable { 100 } else { 0 }),
                Value::Null,
                Value::Null,
            ]
        })
        .collect();
    rows.extend(enum_types(s));
    rows.extend(composite_types(s));
    rows
}

fn int2vector(v: &[i16]) -> String {
    v.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(" ")
}

fn indexes(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        for ix in &t.indexes {
            let primary = t.info.meta.primary_key.as_deref() == Some(ix.def.name.as_str());
            let n = ix.attnums.len();
            let opclass = if hash_buckets(&ix.def).is_some() { "10037" } else { "1978" };
            let options: Vec<i16> = (0..n)
                .map(|k| if ix.def.descending.get(k).copied().unwrap_or(false) { 3 } else { 0 })
                .collect();
            out.push(vec![
                oid(ix.oid),
                oid(t.oid),
                i2(n),
                i2(n),
                b(ix.def.unique),
                b(false),
                b(primary),
                b(false),
                b(true),
                b(false),
                b(true),
                b(false),
                b(true),
                b(true),
                b(false),
                txt(&int2vector(&ix.attnums)),
                txt(&vec!["0"; n].join(" ")),
                txt(&vec![opclass; n].join(" ")),
                txt(&int2vector(&options)),
                // indexprs and indpred, as SQL text (which pg_get_expr
                // shows) rather than PostgreSQL's node trees.
                match &ix.shape {
                    Some(sh) if ix.attnums.contains(&0) => txt(&sh
                        .keys
                        .iter()
                        .zip(&ix.attnums)
                        .filter(|(_, &a)| a == 0)
                        .map(|(k, _)| k.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")),
                    _ => Value::Null,
                },
                ix.shape.as_ref().and_then(|sh| sh.predicate.as_deref()).map_or(Value::Null, txt),
            ]);
        }
    }
    out
}

fn action_code(a: RefAction) -> &'static str {
    match a {
        RefAction::Restrict => "a",
        RefAction::Cascade => "c",
        RefAction::SetNull => "n",
        RefAction::SetDefault => "d",
    }
}

fn int_array(v: &[i16]) -> String {
    array_text::render(&v.iter().map(|a| a.to_string()).collect::<Vec<_>>())
}

fn constraints(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        let nsp = s.schema_oid(&t.schema);
        let meta = &t.info.meta;
        for c in &t.constraints {
            let (contype, indid, frel, upd, del, key, fkey) = match &c.kind {
                ConKind::Key { index, primary } => {
                    let ix = &t.indexes[*index];
                    (if *primary { "p" } else { "u" }, ix.oid, 0, " ", " ", int_array(&ix.attnums), None)
                }
                ConKind::Check(i) => {
                    let cols = super::functions::columns_in(&meta.checks[*i].expr, t);
                    ("c", 0, 0, " ", " ", int_array(&cols), None)
                }
                ConKind::Foreign(i) => {
                    let fk = &meta.foreign_keys[*i];
                    let key: Vec<i16> = fk.columns.iter().map(|c| *c as i16 + 1).collect();
                    let (frel, indid, fkey) = match s.table_by_name(&fk.ref_table) {
                        Some(r) => {
                            let cols = r.info.table.columns();
                            let fkey: Vec<i16> = fk
                                .ref_columns
                                .iter()
                                .map(|n| cols.iter().position(|c| &c.name == n).map_or(0, |p| p as i16 + 1))
                                .collect();
                            let indid = r.indexes.iter().find(|ix| ix.attnums == fkey).map_or(0, |ix| ix.oid);
                            (r.oid, indid, fkey)
                        }
                        None => (0, 0, vec![]),
                    };
                    (
                        "f",
                        indid,
                        frel,
                        action_code(fk.on_update),
                        action_code(fk.on_delete),
                        int_array(&key),
                        Some(int_array(&fkey)),
                    )
                }
            };
            let conbin = match &c.kind {
                ConKind::Check(i) => txt(&meta.checks[*i].expr),
                _ => Value::Null,
            };
            out.push(vec![
                oid(c.oid),
                txt(&c.name),
                oid(nsp),
                txt(contype),
                b(false),
                b(false),
                b(true),
                oid(t.oid),
                oid(0),
                oid(indid),
                oid(0),
                oid(frel),
                txt(upd),
                txt(del),
                txt(if contype == "f" { "s" } else { " " }),
                b(true),
                Value::Integer(0),
                b(false),
                txt(&key),
                fkey.map_or(Value::Null, |k| txt(&k)),
                conbin,
            ]);
        }
    }
    out
}

/// Column defaults. An identity column has none (its sequence is its
/// own, see [`owned_sequences`]); a serial column's reads as PostgreSQL
/// shows it, `nextval('schema.seq'::regclass)`.
/// Column `i`'s default or generation expression as `pg_attrdef.adbin`
/// holds it for `pg_get_expr`: as PostgreSQL prints it where
/// [`deparse`](super::deparse) models it, a serial column's sequence named
/// with its schema (`pg_get_expr` drops the schema on the search path).
pub(crate) fn stored_default(s: &Snapshot, t: &TableRel, i: usize) -> Option<String> {
    let m = t.info.meta.columns.get(i)?;
    let e = m.default.as_ref().or(m.generated.as_ref())?;
    if let Some(q) = s.sequences.iter().find(|q| *e == format!("nextval('{}')", q.engine_name)) {
        return Some(format!(
            "nextval('{}.{}'::regclass)",
            crate::names::quote_ident(&q.schema),
            crate::names::quote_ident(&q.name)
        ));
    }
    let columns = t.info.table.columns();
    let style = super::deparse::Style { pretty: false, implicit: false };
    let target = if m.generated.is_some() { None } else { columns.get(i).map(|c| &c.ty) };
    Some(super::deparse::show(e, columns, target, style).unwrap_or_else(|| e.clone()))
}

fn attrdefs(s: &Snapshot) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        for (i, m) in t.info.meta.columns.iter().enumerate() {
            if m.identity_always.is_some() || is_hidden_column(&t.info.table.columns()[i].name) {
                continue;
            }
            let Some(e) = stored_default(s, t, i) else { continue };
            out.push(vec![oid(t.attrdef_oid(i + 1)), oid(t.oid), i2(i + 1), txt(&e)]);
        }
    }
    out
}

/// `pg_depend`: a serial or identity column's sequence belongs to the
/// column (`a`, `i`: auto and internal), and a default that draws from a
/// sequence needs it (`n`), which is how pg_dump knows to set such a
/// default after it creates the sequence.
fn depends(s: &Snapshot) -> Vec<Vec<Value>> {
    let class = oid(SystemTable::Class.oid());
    let row = |classid: i32, objid: i32, objsubid: i32, refobjid: i32, refobjsubid: i32, deptype: &str| {
        vec![
            oid(classid),
            oid(objid),
            Value::Integer(objsubid),
            class.clone(),
            oid(refobjid),
            Value::Integer(refobjsubid),
            txt(deptype),
        ]
    };
    let mut out: Vec<Vec<Value>> = owned_sequences(s)
        .into_iter()
        .map(|(seq, t, attnum, identity)| {
            row(SystemTable::Class.oid(), seq, 0, t, attnum, if identity { "i" } else { "a" })
        })
        .collect();
    // A view's rule is part of the view, and needs what its query reads
    // (pg_dump orders its output by these).
    for (rule, view, def) in view_rules(s) {
        out.push(row(SystemTable::Rewrite.oid(), rule, 0, view, 0, "i"));
        for d in &def.depends_on {
            let target = s
                .table_by_name(d)
                .map(|t| t.oid)
                .or_else(|| s.views.iter().find(|v| &v.def.name == d).map(|v| v.oid));
            if let Some(t) = target {
                out.push(row(SystemTable::Rewrite.oid(), rule, 0, t, 0, "n"));
            }
        }
    }
    // Every default that draws from a sequence needs it (an identity's
    // sequence is internal to its column instead).
    for t in &s.tables {
        for (i, m) in t.info.meta.columns.iter().enumerate() {
            let Some(d) = m.default.as_ref().filter(|_| m.identity_always.is_none()) else { continue };
            if let Some(q) = s.sequences.iter().find(|q| *d == format!("nextval('{}')", q.engine_name)) {
                out.push(row(SystemTable::Attrdef.oid(), t.attrdef_oid(i + 1), 0, q.oid, 0, "n"));
            }
        }
    }
    // The `centum` schema and its views belong to the built-in extension
    // `centum`, which is how pg_dump knows to leave them out of a dump.
    let member = |classid: i32, objid: i32| {
        let mut r = row(classid, objid, 0, CENTUM_EXTENSION, 0, "e");
        r[3] = oid(SystemTable::Extension.oid());
        r
    };
    out.push(member(SystemTable::Namespace.oid(), super::snapshot::CENTUM));
    for t in SystemTable::ALL.iter().filter(|t| t.name().0 == "centum") {
        out.push(member(SystemTable::Class.oid(), t.oid()));
    }
    out
}

/// OID of the built-in extension `centum`, which owns the `centum` schema:
/// below 16384, so pg_dump takes it for part of the system (as plpgsql
/// is in PostgreSQL) and dumps neither it nor what it owns.
const CENTUM_EXTENSION: i32 = 13002;

/// Every view's and materialized view's rule: (rule OID, view OID, view).
pub(crate) fn view_rules(s: &Snapshot) -> Vec<(i32, i32, &crate::catalog::ViewDef)> {
    let mut out: Vec<_> = s.views.iter().map(|v| (v.oid + 1, v.oid, &v.def)).collect();
    out.extend(s.tables.iter().filter_map(|t| Some((t.rule_oid(), t.oid, t.materialized.as_ref()?))));
    out.sort_by_key(|r| r.0);
    out
}

/// The sequences serial and identity columns draw from: (sequence, table,
/// column number, whether an identity's). Such a sequence belongs to its
/// column: it goes when the column or table does.
pub(crate) fn owned_sequences(s: &Snapshot) -> Vec<(i32, i32, i32, bool)> {
    let mut out = Vec::new();
    for t in &s.tables {
        for (i, m) in t.info.meta.columns.iter().enumerate() {
            let Some(d) = &m.default else { continue };
            if let Some(q) = s.sequences.iter().find(|q| *d == format!("nextval('{}')", q.engine_name)) {
                let expected = format!("{}_{}_seq", t.engine_name, t.info.table.columns()[i].name);
                if q.engine_name == expected {
                    out.push((q.oid, t.oid, i as i32 + 1, m.identity_always.is_some()));
                }
            }
        }
    }
    out
}

fn sequences(s: &Snapshot) -> Vec<Vec<Value>> {
    s.sequences
        .iter()
        .filter_map(|q| {
            let d = s.sequence_defs.get(&q.engine_name)?;
            Some(vec![
                oid(q.oid),
                oid(20),
                Value::BigInt(d.start),
                Value::BigInt(d.increment),
                Value::BigInt(d.max),
                Value::BigInt(d.min),
                Value::BigInt(1),
                b(d.cycle),
            ])
        })
        .collect()
}

/// `pg_settings`: the session's settings, each with its value now and
/// the built-in value it starts from.
fn settings(id: &Identity) -> Vec<Vec<Value>> {
    let builtin = crate::settings::Settings::default();
    let vars = id.vars();
    vars.all(id.txn)
        .into_iter()
        .map(|l| {
            let (value, unit) = vars.in_unit(&l.name, id.txn).unwrap_or((l.value.clone(), None));
            let boot =
                builtin.in_unit(&l.name, crate::settings::TxnView::NONE).map(|b| b.0).unwrap_or_default();
            let source = if boot == value { "default" } else { "session" };
            let bool_like = matches!(value.as_str(), "on" | "off");
            vec![
                txt(&l.name),
                txt(&value),
                unit.map_or(Value::Null, txt),
                txt(l.category),
                txt(l.about),
                Value::Null,
                txt(if l.preset { "internal" } else { "user" }),
                txt(if bool_like { "bool" } else { "string" }),
                txt(source),
                Value::Null,
                Value::Null,
                Value::Null,
                txt(&boot),
                txt(&boot),
                Value::Null,
                Value::Null,
                b(false),
            ]
        })
        .collect()
}

fn yes(v: bool) -> Value {
    txt(if v { "YES" } else { "NO" })
}

fn info_tables(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let row = |schema: &str, name: &str, kind: &str, insertable: bool| {
        vec![
            txt(id.database),
            txt(schema),
            txt(name),
            txt(kind),
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            yes(insertable),
            yes(false),
            Value::Null,
        ]
    };
    // Materialized views are not in the standard's tables.
    let mut rows: Vec<Vec<Value>> = s
        .tables
        .iter()
        .filter(|t| t.materialized.is_none())
        .map(|t| row(&t.schema, &t.name, "BASE TABLE", true))
        .chain(s.views.iter().map(|v| row(&v.schema, &v.name, "VIEW", v.updatable)))
        .collect();
    rows.sort_by(|a, b| (a[1].to_string(), a[2].to_string()).cmp(&(b[1].to_string(), b[2].to_string())));
    rows
}

fn info_columns(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        for (i, c) in t.info.table.columns().iter().enumerate().filter(|(_, c)| !is_hidden_column(&c.name)) {
            let m = t.info.meta.columns.get(i).cloned().unwrap_or_default();
            let nullable = c.nullable && !t.info.meta.not_null.contains(&i);
            let mut row = info_column(id, &t.schema, &t.name, &c.name, i, &c.ty, nullable);
            // As PostgreSQL's view computes it, with `pg_get_expr`.
            row[5] = match m.default {
                Some(_) if m.identity_always.is_none() => stored_default(s, t, i).map_or(Value::Null, |e| {
                    txt(&super::functions::unqualified_sequences(&e, &["public".into()]))
                }),
                _ => Value::Null,
            };
            row[17] = yes(m.identity_always.is_some());
            row[18] = match m.identity_always {
                Some(true) => txt("ALWAYS"),
                Some(false) => txt("BY DEFAULT"),
                None => Value::Null,
            };
            row[19] = txt(if m.generated.is_some() { "ALWAYS" } else { "NEVER" });
            row[20] = m.generated.as_deref().map_or(Value::Null, txt);
            row[21] = yes(m.generated.is_none());
            out.push(row);
        }
    }
    // A view's columns as its query binds now; a column of no known type
    // (`NULL AS x`) reads as text, as PostgreSQL makes it.
    for v in &s.views {
        for (i, c) in v.columns.iter().enumerate() {
            let mut row = info_column(
                id,
                &v.schema,
                &v.name,
                &c.name,
                i,
                c.ty.as_ref().unwrap_or(&DataType::Text),
                true,
            );
            row[21] = yes(v.updatable_columns.get(i).copied().unwrap_or(false));
            out.push(row);
        }
    }
    out
}

/// A row of `information_schema.columns` for column `name` (position
/// `i` from 0) of type `ty`: no default, identity or generation.
fn info_column(
    id: &Identity,
    schema: &str,
    table: &str,
    name: &str,
    i: usize,
    ty: &DataType,
    nullable: bool,
) -> Vec<Value> {
    let int = |v: Option<u32>| v.map_or(Value::Null, |v| Value::Integer(v as i32));
    let (max_len, precision, radix, scale, dt_precision) = match ty {
        DataType::Varchar(n) => (n.map(|n| n as i32), None, None, None, None),
        DataType::Char(n) => (Some(*n as i32), None, None, None, None),
        DataType::SmallInt => (None, Some(16), Some(2), Some(0), None),
        DataType::Integer => (None, Some(32), Some(2), Some(0), None),
        DataType::BigInt => (None, Some(64), Some(2), Some(0), None),
        DataType::Double => (None, Some(53), Some(2), None, None),
        DataType::Numeric { precision, scale } => {
            (None, precision.map(i32::from), Some(10), precision.map(|_| i32::from(scale.unwrap_or(0))), None)
        }
        DataType::Date => (None, None, None, None, Some(0)),
        DataType::Timestamp | DataType::TimestampTz => (None, None, None, None, Some(6)),
        _ => (None, None, None, None, None),
    };
    let octet = match ty {
        DataType::Varchar(Some(n)) | DataType::Char(n) => Some(n.saturating_mul(4)),
        DataType::Varchar(None) | DataType::Text => Some(1_073_741_824),
        _ => None,
    };
    let data_type = match ty {
        DataType::Varchar(_) => "character varying".to_string(),
        DataType::Char(_) => "character".to_string(),
        DataType::Numeric { .. } => "numeric".to_string(),
        // The SQL standard's name; udt_name says of what (`_int4`).
        DataType::Array(_) => "ARRAY".to_string(),
        t => t.sql_name(),
    };
    let udt = types::by_oid(oid_of(ty)).map_or("", |t| t.name);
    vec![
        txt(id.database),
        txt(schema),
        txt(table),
        txt(name),
        Value::Integer(i as i32 + 1),
        Value::Null,
        yes(nullable),
        txt(&data_type),
        max_len.map_or(Value::Null, Value::Integer),
        int(octet),
        precision.map_or(Value::Null, Value::Integer),
        radix.map_or(Value::Null, Value::Integer),
        scale.map_or(Value::Null, Value::Integer),
        dt_precision.map_or(Value::Null, Value::Integer),
        txt(id.database),
        txt("pg_catalog"),
        txt(udt),
        yes(false),
        Value::Null,
        txt("NEVER"),
        Value::Null,
        yes(true),
    ]
}

fn info_constraints(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        for c in &t.constraints {
            let kind = match c.kind {
                ConKind::Key { primary: true, .. } => "PRIMARY KEY",
                ConKind::Key { primary: false, .. } => "UNIQUE",
                ConKind::Check(_) => "CHECK",
                ConKind::Foreign(_) => "FOREIGN KEY",
            };
            out.push(vec![
                txt(id.database),
                txt(&t.schema),
                txt(&c.name),
                txt(id.database),
                txt(&t.schema),
                txt(&t.name),
                txt(kind),
                yes(false),
                yes(false),
                yes(true),
                if matches!(c.kind, ConKind::Key { .. }) { yes(true) } else { Value::Null },
            ]);
        }
    }
    out
}

fn info_key_columns(s: &Snapshot, id: &Identity) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for t in &s.tables {
        let cols = t.info.table.columns();
        for c in &t.constraints {
            let (attnums, positions): (Vec<i16>, Option<Vec<i32>>) = match &c.kind {
                ConKind::Key { index, .. } => (t.indexes[*index].attnums.clone(), None),
                ConKind::Foreign(i) => {
                    let fk = &t.info.meta.foreign_keys[*i];
                    let n = fk.columns.len() as i32;
                    (fk.columns.iter().map(|c| *c as i16 + 1).collect(), Some((1..=n).collect()))
                }
                ConKind::Check(_) => continue,
            };
            for (k, a) in attnums.iter().enumerate() {
                let Some(col) = cols.get((*a as usize).wrapping_sub(1)) else { continue };
                out.push(vec![
                    txt(id.database),
                    txt(&t.schema),
                    txt(&c.name),
                    txt(id.database),
                    txt(&t.schema),
                    txt(&t.name),
                    txt(&col.name),
                    Value::Integer(k as i32 + 1),
                    positions.as_ref().map_or(Value::Null, |p| Value::Integer(p[k])),
                ]);
            }
        }
    }
    out
}

/// The element type of a catalog column PostgreSQL declares as an array of
/// numbers (`indkey`, `conkey`, ...), for subscripts of it.
pub(crate) fn array_element_type(column: &str) -> Option<DataType> {
    match column {
        "indkey" | "indoption" | "conkey" | "confkey" | "prattrs" | "stxkeys" | "partattrs" => {
            Some(DataType::SmallInt)
        }
        "indclass" | "indcollation" | "polroles" | "partclass" | "partcollation" | "proargtypes" => {
            Some(DataType::Oid)
        }
        _ => None,
    }
}
