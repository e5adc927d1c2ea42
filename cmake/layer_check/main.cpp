// The entry point of the layer checks of src/CMakeLists.txt: executables that
// are linked, to prove every reference of a layer resolves below it, and
// never run.
int main() { return 0; }
