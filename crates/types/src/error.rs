//! Errors raised while checking, converting, parsing and encoding values.
//!
//! Every failure a user can provoke through SQL text or an INSERT maps to one
//! variant of [`TypeError`], and every variant maps to the PostgreSQL
//! SQLSTATE a client would see from PostgreSQL for the same mistake, so the
//! wire layer can pass the code through unchanged:
//!
//! ```text
//!   variant             SQLSTATE  condition name
//!   Mismatch            42804     datatype_mismatch
//!   CannotCoerce        42846     cannot_coerce
//!   OutOfRange          22003     numeric_value_out_of_range
//!   StringTooLong       22001     string_data_right_truncation
//!   InvalidText         22P02     invalid_text_representation
//!   MalformedRecord     22P02     invalid_text_representation
//!   InvalidJson         22P02     invalid_text_representation
//!   UntranslatableJson  22P05     untranslatable_character
//!   TooDeep             54001     statement_too_complex
//!   InvalidDatetime     22007     invalid_datetime_format
//!   DatetimeOverflow    22008     datetime_field_overflow
//!   IntervalOverflow    22015     interval_field_overflow
//!   DivisionByZero      22012     division_by_zero
//!   InvalidParameter    22023     invalid_parameter_value
//!   Unsupported         0A000     feature_not_supported
//!   TextSearchSyntax    42601     syntax_error
//!   UndefinedObject     42704     undefined_object
//!   InvalidBinary       22P03     invalid_binary_representation
//! ```
//!
//! The messages follow PostgreSQL's wording (`integer out of range`,
//! `value too long for type character varying(5)`) so that test scripts
//! checked against a real PostgreSQL read the same here.

/// Errors from type checks and conversions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TypeError {
    /// A value of one type was used where another type is required and no
    /// assignment conversion exists (42804 datatype_mismatch).
    #[error("column is of type {expected} but expression is of type {found}")]
    Mismatch {
        /// The SQL name of the required type.
        expected: String,
        /// The SQL name of the type that was supplied.
        found: String,
    },
    /// A number does not fit the target type (22003 numeric_value_out_of_range).
    /// The text is the whole message, e.g. `smallint out of range`.
    #[error("{0}")]
    OutOfRange(String),
    /// A string is longer than a `varchar(n)` / `char(n)` column allows
    /// (22001 string_data_right_truncation).
    #[error(
        "value too long for type {}({max})",
        if *.blank_padded { "character" } else { "character varying" }
    )]
    StringTooLong {
        /// The declared length of the column, in characters.
        max: u32,
        /// True for `character(n)`, false for `character varying(n)`; only
        /// the message differs.
        blank_padded: bool,
    },
    /// Text that is not a valid literal of the type (22P02 invalid_text_representation).
    #[error("invalid input syntax for type {ty}: \"{input}\"")]
    InvalidText {
        /// The SQL name of the type being parsed.
        ty: String,
        /// The offending input, as given.
        input: String,
    },
    /// Text that is not a label of an enum type (22P02
    /// invalid_text_representation).
    #[error("invalid input value for enum {ty}: \"{input}\"")]
    InvalidEnumLabel {
        /// The enum type's name.
        ty: String,
        /// The offending input, as given.
        input: String,
    },
    /// Text that is not an array literal (22P02 invalid_text_representation).
    #[error("malformed array literal: \"{0}\"")]
    MalformedArray(String),
    /// A conversion that does not exist between the two types, such as a
    /// row of three fields to a composite type of two (42846
    /// cannot_coerce). The text is the whole message.
    #[error("{0}")]
    CannotCoerce(String),
    /// Text that is not a record literal (22P02 invalid_text_representation).
    #[error("malformed record literal: \"{input}\"")]
    MalformedRecord {
        /// The offending input, as given.
        input: String,
        /// What is wrong with it, as PostgreSQL's detail line says.
        detail: String,
    },
    /// Text that is not JSON (22P02 invalid_text_representation).
    #[error("invalid input syntax for type json")]
    InvalidJson,
    /// A JSON `\u0000` escape, which text cannot hold (22P05
    /// untranslatable_character).
    #[error("unsupported Unicode escape sequence")]
    UntranslatableJson,
    /// Input nested too deeply to read safely (54001 statement_too_complex).
    #[error("stack depth limit exceeded")]
    TooDeep,
    /// Date/time text in a format that cannot be read (22007 invalid_datetime_format).
    /// The text is the whole message.
    #[error("{0}")]
    InvalidDatetime(String),
    /// A date/time field or result outside its range, such as month 13 or a
    /// year past the timestamp range (22008 datetime_field_overflow).
    /// The text is the whole message.
    #[error("{0}")]
    DatetimeOverflow(String),
    /// An interval field in input text that does not fit its field, such as
    /// `2147483648 days` (22015 interval_field_overflow). The text is the
    /// whole message.
    #[error("{0}")]
    IntervalOverflow(String),
    /// Division of a value by zero, such as `interval '1 day' / 0`
    /// (22012 division_by_zero).
    #[error("division by zero")]
    DivisionByZero,
    /// A type modifier or other parameter outside its allowed range, such as
    /// `numeric(40)` (22023 invalid_parameter_value). The text is the whole message.
    #[error("{0}")]
    InvalidParameter(String),
    /// Valid PostgreSQL input that Centum cannot represent, such as a numeric
    /// `NaN` (0A000 feature_not_supported). The text is the whole message.
    #[error("{0}")]
    Unsupported(String),
    /// Text that is not a `tsvector` or `tsquery` (42601 syntax_error, as
    /// PostgreSQL reports it). The text is the whole message.
    #[error("{0}")]
    TextSearchSyntax(String),
    /// A named object that does not exist, such as a text search
    /// configuration (42704 undefined_object). The text is the whole message.
    #[error("{0}")]
    UndefinedObject(String),
    /// Binary input that is not of the type's binary form (22P03
    /// invalid_binary_representation). The text is the whole message.
    #[error("{0}")]
    InvalidBinary(String),
}

impl TypeError {
    /// The five-character SQLSTATE PostgreSQL reports for this error.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            TypeError::Mismatch { .. } => "42804",
            TypeError::CannotCoerce(_) => "42846",
            TypeError::OutOfRange(_) => "22003",
            TypeError::StringTooLong { .. } => "22001",
            TypeError::InvalidText { .. }
            | TypeError::InvalidEnumLabel { .. }
            | TypeError::MalformedArray(_)
            | TypeError::MalformedRecord { .. }
            | TypeError::InvalidJson => "22P02",
            TypeError::UntranslatableJson => "22P05",
            TypeError::TooDeep => "54001",
            TypeError::InvalidDatetime(_) => "22007",
            TypeError::DatetimeOverflow(_) => "22008",
            TypeError::IntervalOverflow(_) => "22015",
            TypeError::DivisionByZero => "22012",
            TypeError::InvalidParameter(_) => "22023",
            TypeError::Unsupported(_) => "0A000",
            TypeError::TextSearchSyntax(_) => "42601",
            TypeError::UndefinedObject(_) => "42704",
            TypeError::InvalidBinary(_) => "22P03",
        }
    }

    /// Shorthand for [`TypeError::InvalidText`].
    pub(crate) fn invalid_text(ty: &str, input: &str) -> TypeError {
        TypeError::InvalidText { ty: ty.to_string(), input: input.to_string() }
    }

    /// Shorthand for [`TypeError::Mismatch`].
    pub(crate) fn mismatch(expected: impl ToString, found: impl ToString) -> TypeError {
        TypeError::Mismatch { expected: expected.to_string(), found: found.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_like_postgres() {
        let cases = [
            (
                TypeError::mismatch("integer", "boolean"),
                "column is of type integer but expression is of type boolean",
                "42804",
            ),
            (TypeError::OutOfRange("smallint out of range".into()), "smallint out of range", "22003"),
            (
                TypeError::StringTooLong { max: 5, blank_padded: false },
                "value too long for type character varying(5)",
                "22001",
            ),
            (
                TypeError::StringTooLong { max: 3, blank_padded: true },
                "value too long for type character(3)",
                "22001",
            ),
            (
                TypeError::invalid_text("integer", "abc"),
                "invalid input syntax for type integer: \"abc\"",
                "22P02",
            ),
            (TypeError::InvalidDatetime("bad".into()), "bad", "22007"),
            (TypeError::DatetimeOverflow("date out of range".into()), "date out of range", "22008"),
            (TypeError::InvalidParameter("p".into()), "p", "22023"),
            (TypeError::Unsupported("u".into()), "u", "0A000"),
        ];
        for (err, message, code) in cases {
            assert_eq!(err.to_string(), message);
            assert_eq!(err.sqlstate(), code);
        }
    }
}
