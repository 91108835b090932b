//! ONNX Runtime is found in the project location that `./packaging/dev.sh` fills, and loads.

use mavboard_inference::inference::ort_lib;

#[test]
fn runtime_loads_from_the_usual_places() {
    let rt = ort_lib::init(None).expect("ONNX Runtime should be installed by ./packaging/dev.sh test");
    assert!(rt.path.is_file(), "{}", rt.path.display());
    // A second call returns the same runtime.
    let again = ort_lib::init(None).expect("already loaded");
    assert_eq!(again.path, rt.path);
}
