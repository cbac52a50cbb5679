//! Built-in types as pg_type shows them, and PostgreSQL's type modifiers.

use centum_types::DataType;

/// A row of pg_type.
pub(crate) struct TypeRow {
    pub oid: i32,
    pub name: &'static str,
    /// `format_type` text.
    pub display: &'static str,
    pub len: i16,
    pub byval: bool,
    /// typcategory.
    pub category: &'static str,
    /// Element type of an array type (0 otherwise).
    pub elem: i32,
    /// The array type of this type (0 if none).
    pub array: i32,
    /// typalign.
    pub align: &'static str,
    /// Whether the type is collatable (typcollation 100).
    pub collatable: bool,
}

const fn t(
    oid: i32,
    name: &'static str,
    display: &'static str,
    len: i16,
    category: &'static str,
    array: i32,
) -> TypeRow {
    let byval = len > 0 && len <= 8;
    let align = match len {
        1 => "c",
        2 => "s",
        4 => "i",
        8 => "d",
        _ => "i",
    };
    let collatable = matches!(category.as_bytes(), b"S");
    TypeRow { oid, name, display, len, byval, category, elem: 0, array, align, collatable }
}

/// A vector type: an array of `elem` counted from 0 (typelem set, as
/// clients that decode vectors as arrays read it).
const fn v(oid: i32, name: &'static str, elem: i32, array: i32) -> TypeRow {
    let mut row = t(oid, name, name, -1, "A", array);
    row.elem = elem;
    row
}

/// A pseudo-type (typtype `p`): what functions declare that takes or
/// returns no ordinary type. Admin tools and query generators read them.
const fn p(oid: i32, name: &'static str, len: i16, array: i32) -> TypeRow {
    let mut row = t(oid, name, name, len, "P", array);
    row.byval = len == 4 || len == 8;
    row.align = match len {
        -1 | 8 => "d",
        -2 => "c",
        _ => "i",
    };
    row
}

const fn a(oid: i32, name: &'static str, display: &'static str, elem: i32) -> TypeRow {
    TypeRow {
        oid,
        name,
        display,
        len: -1,
        byval: false,
        category: "A",
        elem,
        array: 0,
        align: "i",
        collatable: false,
    }
}

/// The types Centum's columns and catalog use, with PostgreSQL's OIDs.
pub(crate) const TYPES: &[TypeRow] = &[
    t(16, "bool", "boolean", 1, "B", 1000),
    t(17, "bytea", "bytea", -1, "U", 1001),
    t(18, "char", "\"char\"", 1, "Z", 1002),
    t(19, "name", "name", 64, "S", 1003),
    t(20, "int8", "bigint", 8, "N", 1016),
    t(21, "int2", "smallint", 2, "N", 1005),
    v(22, "int2vector", 21, 1006),
    t(23, "int4", "integer", 4, "N", 1007),
    t(24, "regproc", "regproc", 4, "N", 1008),
    t(25, "text", "text", -1, "S", 1009),
    t(26, "oid", "oid", 4, "N", 1028),
    v(30, "oidvector", 26, 1013),
    t(700, "float4", "real", 4, "N", 1021),
    t(701, "float8", "double precision", 8, "N", 1022),
    t(1042, "bpchar", "character", -1, "S", 1014),
    t(1043, "varchar", "character varying", -1, "S", 1015),
    t(1082, "date", "date", 4, "D", 1182),
    t(1114, "timestamp", "timestamp without time zone", 8, "D", 1115),
    t(1083, "time", "time without time zone", 8, "D", 1183),
    t(1184, "timestamptz", "timestamp with time zone", 8, "D", 1185),
    t(1186, "interval", "interval", 16, "T", 1187),
    t(114, "json", "json", -1, "U", 199),
    t(3802, "jsonb", "jsonb", -1, "U", 3807),
    t(1700, "numeric", "numeric", -1, "N", 1231),
    t(2205, "regclass", "regclass", 4, "N", 2210),
    t(2206, "regtype", "regtype", 4, "N", 2211),
    t(2950, "uuid", "uuid", 16, "U", 2951),
    t(4089, "regnamespace", "regnamespace", 4, "N", 4090),
    t(3614, "tsvector", "tsvector", -1, "U", 3643),
    t(3615, "tsquery", "tsquery", -1, "U", 3645),
    t(3734, "regconfig", "regconfig", 4, "N", 3735),
    a(1000, "_bool", "boolean[]", 16),
    a(1001, "_bytea", "bytea[]", 17),
    a(1002, "_char", "\"char\"[]", 18),
    a(1003, "_name", "name[]", 19),
    a(1005, "_int2", "smallint[]", 21),
    a(1006, "_int2vector", "int2vector[]", 22),
    a(1007, "_int4", "integer[]", 23),
    a(1008, "_regproc", "regproc[]", 24),
    a(1009, "_text", "text[]", 25),
    a(1013, "_oidvector", "oidvector[]", 30),
    a(1014, "_bpchar", "character[]", 1042),
    a(1015, "_varchar", "character varying[]", 1043),
    a(1016, "_int8", "bigint[]", 20),
    a(1021, "_float4", "real[]", 700),
    a(1022, "_float8", "double precision[]", 701),
    a(1028, "_oid", "oid[]", 26),
    a(1115, "_timestamp", "timestamp without time zone[]", 1114),
    a(1182, "_date", "date[]", 1082),
    a(1183, "_time", "time without time zone[]", 1083),
    a(1185, "_timestamptz", "timestamp with time zone[]", 1184),
    a(1187, "_interval", "interval[]", 1186),
    a(199, "_json", "json[]", 114),
    a(3807, "_jsonb", "jsonb[]", 3802),
    a(1231, "_numeric", "numeric[]", 1700),
    a(2210, "_regclass", "regclass[]", 2205),
    a(2211, "_regtype", "regtype[]", 2206),
    a(2951, "_uuid", "uuid[]", 2950),
    a(4090, "_regnamespace", "regnamespace[]", 4089),
    a(3643, "_tsvector", "tsvector[]", 3614),
    a(3645, "_tsquery", "tsquery[]", 3615),
    a(3735, "_regconfig", "regconfig[]", 3734),
    p(2249, "record", -1, 2287),
    p(2287, "_record", -1, 0),
    p(2275, "cstring", -2, 1263),
    a(1263, "_cstring", "cstring[]", 2275),
    p(2276, "any", 4, 0),
    p(2277, "anyarray", -1, 0),
    p(2278, "void", 4, 0),
    p(2279, "trigger", 4, 0),
    p(3838, "event_trigger", 4, 0),
    p(2280, "language_handler", 4, 0),
    p(2281, "internal", 8, 0),
    p(2283, "anyelement", 4, 0),
    p(2776, "anynonarray", 4, 0),
    p(3500, "anyenum", 4, 0),
    p(3831, "anyrange", -1, 0),
    p(4537, "anymultirange", -1, 0),
    p(5077, "anycompatible", 4, 0),
    p(5078, "anycompatiblearray", -1, 0),
    p(5079, "anycompatiblenonarray", 4, 0),
    p(5080, "anycompatiblerange", -1, 0),
    p(4538, "anycompatiblemultirange", -1, 0),
    p(3115, "fdw_handler", 4, 0),
    p(325, "index_am_handler", 4, 0),
    p(269, "table_am_handler", 4, 0),
    p(3310, "tsm_handler", 4, 0),
    p(32, "pg_ddl_command", 8, 0),
    p(705, "unknown", -2, 0),
];

/// The built-in type with OID `oid`.
pub(crate) fn by_oid(oid: i32) -> Option<&'static TypeRow> {
    TYPES.iter().find(|t| t.oid == oid)
}

/// The built-in type named `name` (its pg_type name or SQL name).
pub(crate) fn by_name(name: &str) -> Option<&'static TypeRow> {
    let name = match name {
        "integer" | "int" => "int4",
        "smallint" => "int2",
        "bigint" => "int8",
        "boolean" => "bool",
        "real" => "float4",
        "double precision" => "float8",
        "character varying" => "varchar",
        "character" => "bpchar",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "time without time zone" => "time",
        "decimal" => "numeric",
        n => n,
    };
    TYPES.iter().find(|t| t.name == name)
}

/// `format_type(oid, typmod)`: the type's SQL name with its modifier.
pub(crate) fn format_type(oid: i32, typmod: Option<i32>) -> String {
    let Some(t) = by_oid(oid) else { return "???".to_string() };
    let m = typmod.unwrap_or(-1);
    // An array type with a modifier: its element's name with it, then `[]`.
    if t.elem != 0 && m >= 4 {
        return format!("{}[]", format_type(t.elem, Some(m)));
    }
    match (oid, m) {
        (1043 | 1042, m) if m >= 4 => format!("{}({})", t.display, m - 4),
        (1700, m) if m >= 4 => format!("numeric({},{})", ((m - 4) >> 16) & 0xffff, (m - 4) & 0xffff),
        _ => t.display.to_string(),
    }
}

/// A column type's pg_type OID.
pub(crate) fn oid_of(ty: &DataType) -> i32 {
    ty.pg_oid() as i32
}
