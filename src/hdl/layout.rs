//! Payload layouts: the named fields of a packed stream payload (`head.field("last")`, not
//! `head.bit(l*w+cw+2)`).

use super::bits::Bits;
use super::expr::Expr;
use std::panic::Location;
use std::sync::Arc;

/// One named field of a packed payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// Field name (a port-name part: lower case, `_`).
    pub name: String,
    /// Lowest bit in the payload.
    pub lo: u32,
    /// Width in bits.
    pub width: u32,
}

/// Named fields of a packed payload; the first field is at bit 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    fields: Vec<Field>,
    width: u32,
}

impl Layout {
    /// A layout of `(name, width)` fields, the first at bit 0.
    pub fn new(fields: &[(&str, u32)]) -> Arc<Layout> {
        let mut lo = 0;
        let fields = fields
            .iter()
            .map(|(n, w)| {
                let f = Field {
                    name: n.to_string(),
                    lo,
                    width: *w,
                };
                lo += w;
                f
            })
            .collect();
        Arc::new(Layout { fields, width: lo })
    }

    /// A single field called `data`.
    pub fn data(width: u32) -> Arc<Layout> {
        Layout::new(&[("data", width)])
    }

    /// This layout with one more field above the others.
    pub fn with(&self, name: &str, width: u32) -> Arc<Layout> {
        let mut v: Vec<(&str, u32)> = self
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.width))
            .collect();
        v.push((name, width));
        Layout::new(&v)
    }

    /// Payload width in bits.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The fields, LSB first.
    pub fn fields(&self) -> &[Field] {
        &self.fields
    }

    /// The field called `name`.
    pub fn find(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Field `name` of `payload` (a signal, a constant or a concatenation). An unknown field
    /// or a payload of the wrong width is a builder error naming the calling line.
    #[track_caller]
    pub fn get(&self, payload: &Expr, name: &str) -> Expr {
        let loc = Location::caller();
        if payload.width() != self.width {
            return Expr::malformed(
                1,
                format!(
                    "payload `{}` is {} bits, layout {} is {} (at {})",
                    payload.brief(),
                    payload.width(),
                    self.describe(),
                    self.width,
                    loc
                ),
            );
        }
        match self.find(name) {
            Some(f) => payload.slice(f.lo, f.width),
            None => Expr::malformed(
                1,
                format!(
                    "no field `{}` in layout {} (at {})",
                    name,
                    self.describe(),
                    loc
                ),
            ),
        }
    }

    /// Packs every field (each exactly once, widths as declared) into a payload.
    #[track_caller]
    pub fn pack(&self, values: &[(&str, Expr)]) -> Expr {
        let loc = Location::caller();
        let mut parts = Vec::with_capacity(self.fields.len());
        for f in self.fields.iter().rev() {
            let mut it = values.iter().filter(|(n, _)| *n == f.name);
            let v = match (it.next(), it.next()) {
                (Some((_, v)), None) if v.width() == f.width => v.clone(),
                (Some((_, v)), None) => Expr::malformed(
                    f.width,
                    format!(
                        "field `{}` is {} bits, value `{}` is {} (at {})",
                        f.name,
                        f.width,
                        v.brief(),
                        v.width(),
                        loc
                    ),
                ),
                (None, _) => Expr::malformed(
                    f.width,
                    format!("field `{}` is not given (at {})", f.name, loc),
                ),
                (Some(_), Some(_)) => Expr::malformed(
                    f.width,
                    format!("field `{}` is given twice (at {})", f.name, loc),
                ),
            };
            parts.push(v);
        }
        for (n, _) in values {
            if self.find(n).is_none() {
                parts.push(Expr::malformed(
                    1,
                    format!(
                        "no field `{}` in layout {} (at {})",
                        n,
                        self.describe(),
                        loc
                    ),
                ));
            }
        }
        Expr::cat(&parts)
    }

    /// Software side: packs field values (truncated to their widths) into payload bits.
    pub fn pack_bits(&self, values: &[(&str, Bits)]) -> Bits {
        let mut out = Bits::zero(self.width.max(1));
        for (n, v) in values {
            if let Some(f) = self.find(n) {
                for i in 0..f.width.min(v.width()) {
                    out.set_bit(f.lo + i, v.bit(i));
                }
            }
        }
        out
    }

    /// Software side: field `name` of payload bits (`None` for an unknown field).
    pub fn unpack_bits(&self, payload: &Bits, name: &str) -> Option<Bits> {
        let f = self.find(name)?;
        Some(payload.resize(self.width.max(1)).slice(f.lo, f.width))
    }

    /// `{name:width, ...}` for messages.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .fields
            .iter()
            .map(|f| format!("{}:{}", f.name, f.width))
            .collect();
        format!("{{{}}}", parts.join(", "))
    }
}
