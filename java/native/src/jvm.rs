//! The JNI boundary: class references resolved once in `JNI_OnLoad` (so calls made on the
//! core's runtime threads work under Spark's and Flink's child-first class loaders), the one
//! mapping of core errors to Java exceptions, and [`entry`], which every native method runs
//! inside: it catches panics and turns errors into pending Java exceptions.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use jni::objects::{GlobalRef, JClass, JMethodID, JObject, JStaticMethodID, JValue};
use jni::signature::ReturnType;
use jni::sys::{jint, jvalue, JNI_ERR, JNI_VERSION_1_8};
use jni::{JNIEnv, JavaVM};
use riverlet::error::codes;
use riverlet::{Error, ErrorKind};

/// What a native method body fails with.
#[derive(Debug)]
pub enum Failure {
    /// A core error: thrown as the matching `RiverletException` subclass.
    Core(Error),
    /// A Java exception is already pending (a JNI call failed inside the JVM): leave it.
    Java,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        match e {
            jni::errors::Error::JavaException => Failure::Java,
            other => Failure::Core(Error::internal(format!("JNI call failed: {other}"))),
        }
    }
}

impl From<arrow_schema::ArrowError> for Failure {
    fn from(e: arrow_schema::ArrowError) -> Self {
        Failure::Core(Error::from(e))
    }
}

/// The result of a native method body.
pub type JniResult<T> = std::result::Result<T, Failure>;

/// Classes and methods resolved once, when the library is loaded.
pub struct Cache {
    /// The JVM (for attaching runtime threads).
    pub vm: JavaVM,
    /// `io.riverlet.RiverletException`.
    exception_class: GlobalRef,
    /// `RiverletException.fromNative(String, int, String, String)`.
    from_native: JStaticMethodID,
    /// `java.lang.String` (element class of `String[]`).
    pub string_class: GlobalRef,
    /// `java.lang.Object` (element class of `Object[]`).
    pub object_class: GlobalRef,
    /// `io.riverlet.TableInfo`.
    pub table_info_class: GlobalRef,
    /// `io.riverlet.PartitionInfo`.
    pub partition_info_class: GlobalRef,
    /// `io.riverlet.BucketLeader`.
    pub bucket_leader_class: GlobalRef,
    /// `io.riverlet.TableName`.
    pub table_name_class: GlobalRef,
    /// `TableName(String name, String table, int kind)`.
    pub table_name_ctor: JMethodID,
}

static CACHE: OnceLock<Cache> = OnceLock::new();

/// The cache filled by `JNI_OnLoad`.
pub fn cache() -> JniResult<&'static Cache> {
    CACHE
        .get()
        .ok_or_else(|| Failure::Core(Error::internal("riverlet-jni: JNI_OnLoad did not run")))
}

fn global_class(env: &mut JNIEnv<'_>, name: &str) -> jni::errors::Result<GlobalRef> {
    let class = env.find_class(name)?;
    env.new_global_ref(class)
}

fn build_cache(env: &mut JNIEnv<'_>, vm: JavaVM) -> jni::errors::Result<Cache> {
    let exception_class = global_class(env, "io/riverlet/RiverletException")?;
    let from_native = env.get_static_method_id(
        <&JClass>::from(exception_class.as_obj()),
        "fromNative",
        "(Ljava/lang/String;ILjava/lang/String;Ljava/lang/String;)Lio/riverlet/RiverletException;",
    )?;
    let table_name_class = global_class(env, "io/riverlet/TableName")?;
    let table_name_ctor = env.get_method_id(
        <&JClass>::from(table_name_class.as_obj()),
        "<init>",
        "(Ljava/lang/String;Ljava/lang/String;I)V",
    )?;
    Ok(Cache {
        vm,
        exception_class,
        from_native,
        string_class: global_class(env, "java/lang/String")?,
        object_class: global_class(env, "java/lang/Object")?,
        table_info_class: global_class(env, "io/riverlet/TableInfo")?,
        partition_info_class: global_class(env, "io/riverlet/PartitionInfo")?,
        bucket_leader_class: global_class(env, "io/riverlet/BucketLeader")?,
        table_name_class,
        table_name_ctor,
    })
}

/// Resolves the classes the library needs, with the class loader that loaded the library.
///
/// # Safety
/// Called by the JVM with a valid `JavaVM` pointer.
#[no_mangle]
pub unsafe extern "system" fn JNI_OnLoad(
    vm: *mut jni::sys::JavaVM,
    _reserved: *mut c_void,
) -> jint {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the JVM passes a valid pointer that outlives the library.
        let vm = match unsafe { JavaVM::from_raw(vm) } {
            Ok(vm) => vm,
            Err(_) => return JNI_ERR,
        };
        let mut env = match vm.get_env() {
            Ok(env) => env,
            Err(_) => return JNI_ERR,
        };
        // SAFETY: same pointer, a second owner-less handle for the cache.
        let cached_vm = match unsafe { JavaVM::from_raw(vm.get_java_vm_pointer()) } {
            Ok(v) => v,
            Err(_) => return JNI_ERR,
        };
        match build_cache(&mut env, cached_vm) {
            Ok(c) => {
                let _ = CACHE.set(c);
                JNI_VERSION_1_8
            }
            Err(_) => JNI_ERR,
        }
    }));
    outcome.unwrap_or(JNI_ERR)
}

/// The Java exception for a core error (the class is picked by `RiverletException.fromNative`,
/// the one mapping of kinds and codes to classes).
pub fn exception<'l>(env: &mut JNIEnv<'l>, e: &Error) -> JniResult<JObject<'l>> {
    let c = cache()?;
    let kind = env.new_string(e.kind().as_str())?;
    let code = e.fluss_code().unwrap_or(i32::MIN);
    let code_name = match e.fluss_code() {
        Some(code) => JObject::from(env.new_string(codes::name_of(code))?),
        None => JObject::null(),
    };
    let message = env.new_string(e.to_string())?;
    let args = [
        jvalue { l: kind.as_raw() },
        jvalue { i: code },
        jvalue {
            l: code_name.as_raw(),
        },
        jvalue {
            l: message.as_raw(),
        },
    ];
    // SAFETY: the method id belongs to this class and the arguments match its signature.
    let exc = unsafe {
        env.call_static_method_unchecked(
            <&JClass>::from(c.exception_class.as_obj()),
            c.from_native,
            ReturnType::Object,
            &args,
        )
    }?;
    Ok(exc.l()?)
}

/// Makes `e` the pending Java exception of this thread.
pub fn throw(env: &mut JNIEnv<'_>, e: &Error) {
    if env.exception_check().unwrap_or(true) {
        return;
    }
    match exception(env, e) {
        Ok(exc) => {
            let _ = env.throw(jni::objects::JThrowable::from(exc));
        }
        Err(_) => {
            if !env.exception_check().unwrap_or(true) {
                let _ = env.throw_new("java/lang/IllegalStateException", e.to_string());
            }
        }
    }
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Runs a native method body: a panic or an error becomes a pending Java exception and the
/// method returns `fallback` (which Java never sees, as the exception is thrown on return).
pub fn entry<'l, T>(
    env: &mut JNIEnv<'l>,
    fallback: T,
    body: impl FnOnce(&mut JNIEnv<'l>) -> JniResult<T>,
) -> T {
    match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(v)) => v,
        Ok(Err(Failure::Core(e))) => {
            throw(env, &e);
            fallback
        }
        Ok(Err(Failure::Java)) => fallback,
        Err(p) => {
            let e = Error::new(
                ErrorKind::Internal,
                format!("panic in riverlet-jni: {}", panic_message(p.as_ref())),
            );
            throw(env, &e);
            fallback
        }
    }
}

/// Detaches the current thread from the JVM when the thread ends.
struct DetachOnExit(*mut jni::sys::JavaVM);

impl Drop for DetachOnExit {
    fn drop(&mut self) {
        // SAFETY: the pointer is the JVM's, valid for the life of the process.
        unsafe {
            if let Some(detach) = (**self.0).DetachCurrentThread {
                detach(self.0);
            }
        }
    }
}

thread_local! {
    static ATTACHED: std::cell::RefCell<Option<DetachOnExit>> = const { std::cell::RefCell::new(None) };
}

/// The JNI environment of the current thread, attaching it first as a daemon named after the
/// thread (`riverlet-worker`), so a runtime thread never keeps the JVM alive and shows up
/// under its own name in thread dumps. It stays attached until it ends.
fn attach_daemon(vm: &JavaVM) -> JniResult<JNIEnv<'static>> {
    if let Ok(env) = vm.get_env() {
        // SAFETY: the env pointer belongs to this (attached) thread.
        return Ok(unsafe { JNIEnv::from_raw(env.get_raw()) }?);
    }
    let raw_vm = vm.get_java_vm_pointer();
    let name = std::ffi::CString::new(
        std::thread::current()
            .name()
            .unwrap_or("riverlet-runtime")
            .replace('\0', ""),
    )
    .map_err(|e| Error::internal(format!("thread name: {e}")))?;
    let mut args = jni::sys::JavaVMAttachArgs {
        version: JNI_VERSION_1_8,
        name: name.as_ptr() as *mut std::os::raw::c_char,
        group: std::ptr::null_mut(),
    };
    let mut env_ptr: *mut c_void = std::ptr::null_mut();
    // SAFETY: a valid JVM pointer; args outlive the call.
    let rc = unsafe {
        match (**raw_vm).AttachCurrentThreadAsDaemon {
            Some(attach) => attach(
                raw_vm,
                &mut env_ptr,
                &mut args as *mut jni::sys::JavaVMAttachArgs as *mut c_void,
            ),
            None => JNI_ERR,
        }
    };
    if rc != jni::sys::JNI_OK || env_ptr.is_null() {
        return Err(
            Error::internal(format!("cannot attach a runtime thread to the JVM ({rc})")).into(),
        );
    }
    ATTACHED.with(|a| *a.borrow_mut() = Some(DetachOnExit(raw_vm)));
    // SAFETY: the pointer was just returned for this thread.
    Ok(unsafe { JNIEnv::from_raw(env_ptr as *mut jni::sys::JNIEnv) }?)
}

/// Calls `f` with a JNI environment on the current thread, attaching it to the JVM as a daemon
/// (a runtime thread never keeps the JVM alive). Used by callbacks on the core's runtime.
pub fn with_attached_daemon(f: impl FnOnce(&mut JNIEnv<'_>) -> JniResult<()>) -> JniResult<()> {
    let c = cache()?;
    let mut env = attach_daemon(&c.vm)?;
    let r = catch_unwind(AssertUnwindSafe(|| f(&mut env)));
    // Never leave an exception pending on a runtime thread (its next JNI call would fail).
    if env.exception_check().unwrap_or(false) {
        let _ = env.exception_describe();
        let _ = env.exception_clear();
    }
    match r {
        Ok(r) => r,
        Err(p) => Err(Failure::Core(Error::internal(format!(
            "panic in a riverlet-jni callback: {}",
            panic_message(p.as_ref())
        )))),
    }
}

/// `JValue` helper for object arguments.
pub fn obj<'a>(o: &'a JObject<'a>) -> JValue<'a, 'a> {
    JValue::Object(o)
}
