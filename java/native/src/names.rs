//! Table names: the split of a name into its table and view kind (`t$changelog`, `t$lake`,
//! `t$lake$snapshots`), the core's `metadata::split_table_name`, for `io.riverlet.TableName`.

use jni::objects::{JClass, JString};
use jni::sys::{jobject, jvalue};
use jni::JNIEnv;
use riverlet::metadata::{split_table_name, ViewKind};

use crate::convert::string;
use crate::jvm::{cache, entry};

/// The number `io.riverlet.ViewKind` has for `kind` (its ordinal: the Java enum lists the
/// kinds in this order).
fn kind_number(kind: ViewKind) -> i32 {
    match kind {
        ViewKind::Table => 0,
        ViewKind::Changelog => 1,
        ViewKind::Lake => 2,
        ViewKind::LakeSnapshots => 3,
    }
}

/// A new `io.riverlet.TableName` of `name`: the name, its table's name and its view kind; a
/// name that is only a view suffix is the core's invalid-argument error.
#[no_mangle]
pub extern "system" fn Java_io_riverlet_NativeMethods_tableName<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    name: JString<'l>,
) -> jobject {
    entry(&mut env, std::ptr::null_mut(), |env| {
        let text = string(env, &name, "table name")?;
        let (base, kind) = split_table_name(&text)?;
        let c = cache()?;
        let base = env.new_string(base)?;
        let args = [
            jvalue { l: name.as_raw() },
            jvalue { l: base.as_raw() },
            jvalue {
                i: kind_number(kind),
            },
        ];
        // SAFETY: the constructor id belongs to this class and the arguments match its
        // signature `(String, String, int)`.
        let object = unsafe {
            env.new_object_unchecked(
                <&JClass>::from(c.table_name_class.as_obj()),
                c.table_name_ctor,
                &args,
            )
        }?;
        Ok(object.into_raw())
    })
}
