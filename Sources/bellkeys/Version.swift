/// The version of bellkeys: the one place it is written. `bellkeys --version` prints it, and
/// `Tools/build-deb` names the package after what that prints (and refuses a changelog whose
/// newest entry is another version).
public let bellkeysVersion = "0.4.0"
